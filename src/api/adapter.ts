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
  onOutcome: (outcome: string) => void = () => {},
): ServiceHandler {
  return (err, msg) => {
    if (err) {
      log.error({ err }, "service endpoint failed");
      return;
    }
    void answer(handler, msg, log).then(onOutcome);
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
async function answer(handler: ApiHandler, msg: ServiceMsg, log: Logger): Promise<string> {
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
      respondError(msg, error.code, error.message, log);
      return String(error.code);
    }
    if (error instanceof Error && /max_payload|payload exceeds/i.test(error.message)) {
      // The reply itself is larger than the bus accepts in one message.
      respondError(
        msg,
        413,
        "the reply is larger than the bus's max_payload; add a LIMIT or use db.query.stream",
        log,
      );
      return "413";
    }
    log.error({ err: error, subject: msg.subject }, "request failed with an internal error");
    respondError(msg, 500, "internal server error", log);
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
function respondError(msg: ServiceMsg, code: number, message: string, log: Logger): void {
  const description = errorDescription(message);
  const data = description === message ? undefined : JSON.stringify({ message });
  try {
    msg.respondError(code, description || "error", data);
  } catch (err) {
    log.error({ err, subject: msg.subject }, "could not send an error reply");
  }
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
