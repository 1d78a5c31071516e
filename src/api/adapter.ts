import { headers as natsHeaders } from "@nats-io/nats-core";
import type { ServiceHandler, ServiceMsg } from "@nats-io/services";
import { BadRequestError, MonError } from "../domain/index.ts";
import { API_VERSION_HEADER } from "../protocol/index.ts";
import { parseJsonExact, type Logger } from "../lib/index.ts";

/** What a handler sees of a request. */
export interface ApiRequest {
  readonly subject: string;
  readonly data: Uint8Array;
  header(name: string): string | undefined;
}

/** What a handler answers; errors are thrown as MonError and mapped here. */
export interface ApiReply {
  readonly body: string | Uint8Array;
  readonly headers?: Readonly<Record<string, string>>;
  /** A publish-only endpoint (usage.record): nothing is sent back. */
  readonly noReply?: boolean;
}

export type ApiHandler = (request: ApiRequest) => Promise<ApiReply>;

/** API revisions this build answers (spec: Versioning 3); none has broken the first yet. */
const SUPPORTED_API_VERSIONS = new Set(["1"]);

/**
 * The one place errors become micro errors. A MonError keeps its code and message; anything
 * else is logged with its cause and masked as `500 internal server error` (spec: Errors).
 * The services library does not catch async failures, so every handler goes through here.
 */
export function adapt(
  handler: ApiHandler,
  log: Logger,
  options: {
    readonly onOutcome?: (outcome: string) => void;
    /** The bus's max_payload, which an error reply must fit as well as a result. */
    readonly maxPayload?: () => number | undefined;
  } = {},
): ServiceHandler {
  return (err, msg) => {
    if (err) {
      log.error({ err }, "service endpoint failed");
      return;
    }
    void answer(handler, msg, log, options.maxPayload?.()).then(options.onOutcome);
  };
}

/** Refuses an API revision this build does not answer (spec: Versioning 3). */
export function checkVersion(msg: ServiceMsg): void {
  const version = msg.headers?.get(API_VERSION_HEADER);
  if (version && !SUPPORTED_API_VERSIONS.has(version)) {
    throw new BadRequestError(
      `${API_VERSION_HEADER} ${version} is not supported; supported: ${[...SUPPORTED_API_VERSIONS].join(", ")}`,
    );
  }
}

/** What a handler sees of a service message. */
export function requestOf(msg: ServiceMsg): ApiRequest {
  return {
    subject: msg.subject,
    data: msg.data,
    header: (name) => msg.headers?.get(name) || undefined,
  };
}

/** Answers one request; resolves with its outcome: `ok` or the error code sent. */
async function answer(
  handler: ApiHandler,
  msg: ServiceMsg,
  log: Logger,
  maxPayload: number | undefined,
): Promise<string> {
  try {
    checkVersion(msg);
    const request = requestOf(msg);
    const reply = await handler(request);
    if (reply.noReply) return "ok";
    if (reply.headers) {
      const headers = natsHeaders();
      for (const [k, v] of Object.entries(reply.headers)) headers.set(k, v);
      msg.respond(reply.body, { headers });
    } else {
      msg.respond(reply.body);
    }
    return "ok";
  } catch (error) {
    if (error instanceof MonError) {
      respondError(msg, error.code, error.message, log, maxPayload);
      return String(error.code);
    }
    if (error instanceof Error && /max_payload|payload exceeds/i.test(error.message)) {
      // The reply itself is larger than the bus accepts in one message.
      respondError(
        msg,
        413,
        "the reply is larger than the bus's max_payload; add a LIMIT or use db.query.stream",
        log,
        maxPayload,
      );
      return "413";
    }
    log.error({ err: error, subject: msg.subject }, "request failed with an internal error");
    respondError(msg, 500, "internal server error", log, maxPayload);
    return "500";
  }
}

/** Longest error description sent in a header; the full text goes in `data`. */
const MAX_DESCRIPTION = 1024;

/**
 * Headers cannot hold CR or LF, and DuckDB's messages span lines (LINE 1: …), so the
 * description is folded onto one line and the full message travels as the error `data`.
 * Failing to answer is logged, never thrown: it would take the whole node down.
 */
function respondError(
  msg: ServiceMsg,
  code: number,
  message: string,
  log: Logger,
  maxPayload: number | undefined,
): void {
  const description = errorDescription(message);
  const full = boundErrorText(message, maxPayload);
  const data = description === message || full === undefined ? undefined : JSON.stringify({ message: full });
  try {
    msg.respondError(code, description || "error", data);
  } catch (err) {
    log.error({ err, subject: msg.subject }, "could not send an error reply");
  }
}

/** Most bytes of an error's full text sent: DuckDB quotes a misspelt name whole, however long. */
export const MAX_ERROR_TEXT_BYTES = 64 * 1024;
/** Room kept in max_payload for everything besides the error text (headers, JSON, framing). */
const ERROR_REPLY_ROOM = 4 * MAX_DESCRIPTION;

/**
 * An error's full text as it can travel: whole when it is at most MAX_ERROR_TEXT_BYTES and
 * fits the bus's max_payload beside the reply's headers, else cut (on a character boundary)
 * with a note of what was left out; undefined when the bus leaves no room for it at all.
 * Unbounded, a request naming a column of megabytes had its 400 refused by the bus, and the
 * client waited for its timeout instead.
 */
export function boundErrorText(message: string, maxPayload: number | undefined): string | undefined {
  const limit = Math.min(MAX_ERROR_TEXT_BYTES, (maxPayload ?? Infinity) - ERROR_REPLY_ROOM);
  const bytes = Buffer.byteLength(message, "utf8");
  if (bytes <= limit) return message;
  const note = ` [… cut: the message has ${bytes} bytes]`;
  const keep = limit - Buffer.byteLength(note, "utf8");
  if (keep < MAX_DESCRIPTION) return undefined;
  // Cut at a UTF-8 character boundary: continuation bytes are 10xxxxxx.
  const utf8 = Buffer.from(message, "utf8");
  let end = keep;
  while (end > 0 && (utf8[end]! & 0xc0) === 0x80) end--;
  return utf8.subarray(0, end).toString("utf8") + note;
}

/** An error message as a header value: on one line, at most MAX_DESCRIPTION characters. */
export function errorDescription(message: string): string {
  return message
    .replaceAll(/\s*[\r\n]+\s*/g, " ")
    .trim()
    .slice(0, MAX_DESCRIPTION);
}

/**
 * Parses a JSON request body; an empty body is `{}`. An integer literal beyond 2^53 arrives
 * as a bigint with every digit, so a query parameter is bound as the number sent, never
 * rounded to the nearest double.
 */
export function parseJsonRequest(data: Uint8Array): Record<string, unknown> {
  if (data.length === 0) return {};
  let value: unknown;
  try {
    value = parseJsonExact(Buffer.from(data).toString("utf8"));
  } catch (cause) {
    throw new BadRequestError(`invalid JSON: ${(cause as Error).message}`, { cause });
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new BadRequestError("the request must be a JSON object");
  }
  return value as Record<string, unknown>;
}
