import { errors, headers as natsHeaders, type Msg } from "@nats-io/nats-core";
import {
  ACCEPT,
  API_VERSION_HEADER,
  CSV_MEDIA_TYPE,
  JSON_MEDIA_TYPE,
  systemSubjects,
  type SystemSubjects,
} from "../protocol/index.ts";
import type { BusLink } from "./bus-link.ts";
import { errorReply, JSON_CONTENT_TYPE, type GatewayReply } from "./replies.ts";

/** The read-only `db` actions the gateway bridges, each to its subject (spec: HTTP gateway). */
export const DB_ACTIONS = {
  query: "dbQuery",
  explain: "dbExplain",
  schemas: "dbSchemas",
  tables: "dbTables",
  columns: "dbColumns",
  macros: "dbMacros",
} as const satisfies Record<string, keyof SystemSubjects>;
export type DbAction = keyof typeof DB_ACTIONS;

export interface DbRequest {
  readonly system: string;
  readonly action: DbAction;
  /** The request's JSON text as it arrived, so that large integers keep every digit. */
  readonly body: string;
  readonly csv: boolean;
  readonly apiVersion: string | undefined;
}

const SERVICE_ERROR_CODE = "Nats-Service-Error-Code";
const SERVICE_ERROR = "Nats-Service-Error";
const CONTENT_TYPE = "Content-Type";

/**
 * One HTTP request as one bus request (spec: HTTP gateway; Errors, gateway mapping). The
 * system id is already a valid token. Failures of the transport become 502, 503 or 504
 * here; anything that is not a bus failure is thrown for the caller to mask as 500.
 */
export async function forwardDb(link: BusLink, request: DbRequest, timeoutMs: number): Promise<GatewayReply> {
  const unavailable = busUnavailable(link);
  if (unavailable) return unavailable;
  const subject = systemSubjects(request.system)[DB_ACTIONS[request.action]];
  const h = natsHeaders();
  h.set(ACCEPT, request.csv ? CSV_MEDIA_TYPE : JSON_MEDIA_TYPE);
  if (request.apiVersion !== undefined) h.set(API_VERSION_HEADER, request.apiVersion);
  let reply: Msg;
  try {
    reply = await untilDropped(
      link.nc.request(subject, request.body, { timeout: timeoutMs, headers: h }),
      link.dropped(),
    );
  } catch (err) {
    return mapBusFailure(err, {
      system: request.system,
      timeoutMs,
      ...(link.nc.info ? { maxPayload: link.nc.info.max_payload } : {}),
    });
  }
  return relay(reply);
}

/** The connection a request went out on dropped: its reply can no longer arrive. */
class DroppedError extends Error {}

/** `request`, or DroppedError as soon as `dropped` aborts (the request is then left to time out unheard). */
function untilDropped<T>(request: Promise<T>, dropped: AbortSignal): Promise<T> {
  if (dropped.aborted) {
    request.catch(() => undefined);
    return Promise.reject(new DroppedError());
  }
  return new Promise<T>((resolve, reject) => {
    const onDrop = () => reject(new DroppedError());
    dropped.addEventListener("abort", onDrop, { once: true });
    request.then(resolve, reject).finally(() => dropped.removeEventListener("abort", onDrop));
  });
}

/** 502 without asking when the bus is away: the client would only buffer the request. */
export function busUnavailable(link: BusLink): GatewayReply | undefined {
  const state = link.state();
  if (state === "connected") return undefined;
  return errorReply(502, `the gateway's bus connection is ${state}; try again when it is back`);
}

/** A bus failure as an HTTP answer; rethrows what is not one (it becomes a masked 500). */
export function mapBusFailure(
  err: unknown,
  context: { system?: string; timeoutMs: number; maxPayload?: number },
): GatewayReply {
  const noResponders =
    (err instanceof errors.RequestError && err.isNoResponders()) || err instanceof errors.NoRespondersError;
  if (noResponders) {
    // A mistyped id and a stopped indexer look alike (spec: HTTP gateway rule 4).
    return errorReply(
      503,
      `no responder exists for system "${context.system ?? ""}": no natsmon node serves it on this bus; ` +
        "GET /systems lists the reachable systems",
    );
  }
  if (err instanceof errors.TimeoutError) {
    const from = context.system === undefined ? "" : ` from system "${context.system}"`;
    return errorReply(504, `no answer${from} within ${context.timeoutMs} ms`);
  }
  if (err instanceof DroppedError) {
    return errorReply(
      502,
      "the gateway's bus connection dropped before the answer came; try again when it is back",
    );
  }
  if (err instanceof errors.InvalidArgumentError && /max_payload/.test(err.message)) {
    // The body passed --body-limit but is larger than the bus carries in one message.
    const limit = context.maxPayload === undefined ? "" : ` (${context.maxPayload} bytes with headers)`;
    return errorReply(413, `the request is larger than the bus's max_payload${limit}; send a smaller body`);
  }
  if (TRANSPORT_FAILURES.some((kind) => err instanceof kind)) {
    return errorReply(502, `bus request failed: ${(err as Error).message}`);
  }
  throw err;
}

const TRANSPORT_FAILURES = [
  errors.RequestError,
  errors.ClosedConnectionError,
  errors.DrainingConnectionError,
  errors.ConnectionError,
  errors.ProtocolError,
  errors.PermissionViolationError,
  errors.AuthorizationError,
  errors.UserAuthenticationExpiredError,
];

/** A reply as HTTP: a micro error keeps its status, a result keeps its bytes and type. */
function relay(reply: Msg): GatewayReply {
  const code = reply.headers?.get(SERVICE_ERROR_CODE);
  if (code) {
    const status = Number(code);
    const description = reply.headers?.get(SERVICE_ERROR) || "error";
    if (!Number.isInteger(status) || status < 400 || status > 599) {
      return errorReply(
        502,
        `the system answered with an error code that is not an HTTP error: ${code} ${description}`,
      );
    }
    return errorReply(status, description, errorData(reply.data));
  }
  const type = reply.headers?.get(CONTENT_TYPE) || JSON_MEDIA_TYPE;
  return {
    status: 200,
    contentType: type === JSON_MEDIA_TYPE ? JSON_CONTENT_TYPE : withCharset(type),
    body: reply.data,
  };
}

function errorData(data: Uint8Array): unknown {
  if (data.length === 0) return undefined;
  const text = Buffer.from(data).toString("utf8");
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function withCharset(type: string): string {
  return /;\s*charset=/i.test(type) ? type : `${type}; charset=utf-8`;
}
