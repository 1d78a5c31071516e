import { createHash, createHmac, randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { EndpointConfig } from "../config/index.ts";
import type { DeliveryAttemptEntry, DeliveryKind, DeliveryLogEntry } from "../protocol/index.ts";
import { Headers, Request, fetch } from "undici";
import type { DeliveryRequest } from "./bodies.ts";
import { endpointDispatcher, socketFailure } from "./endpoint-agent.ts";

/** Spec: Limits. */
export const ATTEMPT_TIMEOUT_MS = 10_000;
/** Waits before the second and third attempt of a delivery ("increasing waits"). */
export const ATTEMPT_WAITS_MS: readonly number[] = [1_000, 2_000];
/** A body up to this size is kept in the delivery log, so it can be replayed. */
const LOGGED_BODY_MAX = 512 * 1024;
/** How much of an error body the log keeps. */
const ERROR_TEXT_MAX = 300;

/**
 * The outcome of one HTTP attempt: a value, never an exception. `unsent`: the request could not
 * be built (a local fault, found before anything went out); trying again would fail the same way.
 */
export type AttemptResult =
  | { readonly outcome: "ok"; readonly status: number; readonly ms: number }
  | { readonly outcome: "retry"; readonly status?: number; readonly error: string; readonly ms: number }
  | { readonly outcome: "rejected"; readonly status: number; readonly error: string; readonly ms: number }
  | { readonly outcome: "unsent"; readonly error: string; readonly ms: number };

/** The outcome of a delivery: its last attempt, and how many were made. */
export interface DeliveryResult {
  readonly ok: boolean;
  readonly attempts: number;
  readonly last: AttemptResult;
}

/** Where deliveries are recorded (the delivery log), or nowhere without JetStream. */
export type RecordAttempt = (entry: DeliveryLogEntry) => void;

/** An `alertmanager` endpoint's URL is its base; natsmon posts to its v2 alerts API. */
export function targetUrl(endpoint: Pick<EndpointConfig, "type" | "url">): string {
  if (endpoint.type !== "alertmanager") return endpoint.url;
  const url = new URL(endpoint.url);
  // The base, or the API itself, written with or without a trailing slash.
  const path = url.pathname.replace(/\/+$/, "");
  url.pathname = path.endsWith("/api/v2/alerts") ? path : `${path}/api/v2/alerts`;
  return url.toString();
}

/** Request headers, with the endpoint's authentication (spec: Authentication, item 3). */
export function requestHeaders(
  endpoint: Pick<EndpointConfig, "authType" | "authUser" | "authToken" | "headers">,
  body: string,
  userAgent: string,
): Record<string, string> {
  // The endpoint's own headers first: start-up refuses those natsmon or its auth-type set.
  const headers: Record<string, string> = {
    ...endpoint.headers,
    "content-type": "application/json",
    "user-agent": userAgent,
  };
  const token = endpoint.authToken ?? "";
  switch (endpoint.authType) {
    case "basic":
      headers.authorization = `Basic ${Buffer.from(`${endpoint.authUser ?? ""}:${token}`).toString("base64")}`;
      break;
    case "bearer":
      headers.authorization = `Bearer ${token}`;
      break;
    case "hmac":
      headers["x-hub-signature-256"] =
        `sha256=${createHmac("sha256", token).update(body, "utf8").digest("hex")}`;
      break;
    case undefined:
      break;
  }
  return headers;
}

/**
 * One POST, bounded by the attempt timeout. 2xx is success; a 4xx other than 429 is a
 * rejection that ends the delivery's attempts at once; anything else is retried.
 */
export async function postOnce(
  endpoint: EndpointConfig,
  body: string,
  options: { userAgent: string; timeoutMs?: number; signal?: AbortSignal },
): Promise<AttemptResult> {
  const started = performance.now();
  const timeout = AbortSignal.timeout(options.timeoutMs ?? ATTEMPT_TIMEOUT_MS);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  const request = buildRequest(endpoint, body, options.userAgent, signal);
  if (typeof request === "string")
    return { outcome: "unsent", error: request, ms: performance.now() - started };
  const agent = await endpointDispatcher(endpoint);
  if ("error" in agent) return { outcome: "unsent", error: agent.error, ms: performance.now() - started };
  try {
    const response = await fetch(request, agent.dispatcher ? { dispatcher: agent.dispatcher } : {});
    const text = await response.text();
    const ms = performance.now() - started;
    const status = response.status;
    if (status >= 200 && status < 300) return { outcome: "ok", status, ms };
    if (status >= 300 && status < 400) {
      const to = response.headers.get("location");
      // The target first: `deliveries log` shows the start of the error.
      const error =
        `HTTP ${status}: ${to ? `redirects to ${to}` : "a redirect without a location"}; natsmon does not ` +
        "follow redirects (the alert would not arrive): set the endpoint's url to the address that answers";
      return { outcome: "retry", status, error, ms };
    }
    const error = `HTTP ${status}${text ? `: ${text.slice(0, ERROR_TEXT_MAX).trim()}` : ""}`;
    if (status >= 400 && status < 500 && status !== 429) return { outcome: "rejected", status, error, ms };
    return { outcome: "retry", status, error, ms };
  } catch (err) {
    const ms = performance.now() - started;
    const error = timeout.aborted
      ? `no answer within ${options.timeoutMs ?? ATTEMPT_TIMEOUT_MS} ms`
      : options.signal?.aborted
        ? "stopped before the endpoint answered: natsmon is shutting down; the alerts stay in the outbox and are sent again at the next start"
        : describeError(err, endpoint);
    return { outcome: "retry", error, ms };
  }
}

/**
 * The POST, or why it cannot be made: a header value fetch refuses, say an auth-token with a
 * line break (start-up validation refuses those, so this is the last guard). The reason names
 * the header, never its value: fetch's own message quotes the value, which carries the secret.
 */
function buildRequest(
  endpoint: EndpointConfig,
  body: string,
  userAgent: string,
  signal: AbortSignal,
): Request | string {
  const unsent = (why: string) =>
    `not sent: the request could not be built: ${why}; nothing reached the endpoint`;
  const headers = requestHeaders(endpoint, body, userAgent);
  for (const [name, value] of Object.entries(headers)) {
    try {
      new Headers([[name, value]]);
    } catch {
      const own = endpoint.headers !== undefined && Object.hasOwn(endpoint.headers, name);
      const auth = !own && name !== "user-agent" && name !== "content-type";
      return unsent(
        own
          ? `the endpoint's headers.${name} is not a valid HTTP header value (natsmon config check names the fault)`
          : auth
            ? `the ${name} header, made from the endpoint's auth settings, is not a valid HTTP header value ` +
              "(natsmon config check names the fault)"
            : `the ${name} header is not a valid HTTP header value`,
      );
    }
  }
  try {
    return new Request(targetUrl(endpoint), {
      method: "POST",
      headers,
      body,
      signal,
      // Followed, a 301/302/303 turns the POST into a GET without its body, and the
      // target's 200 would count as delivered though nothing was: a failed attempt instead.
      redirect: "manual",
    });
  } catch (err) {
    return unsent(describeError(err));
  }
}

/**
 * One delivery: up to three attempts with increasing waits, stopping at the first success or
 * rejection (spec: Limits; Errors, delivery responses), or at a request that cannot be built.
 * The delivery is recorded once, when it ends, with every attempt in it: the log keeps
 * deliveries, not attempts (spec: Limits).
 */
export async function deliver(
  endpoint: EndpointConfig,
  request: DeliveryRequest,
  options: {
    kind: DeliveryKind;
    record: RecordAttempt;
    userAgent: string;
    signal?: AbortSignal;
    waitsMs?: readonly number[];
    timeoutMs?: number;
  },
): Promise<DeliveryResult> {
  const waits = options.waitsMs ?? ATTEMPT_WAITS_MS;
  const started = new Date();
  const startedMs = performance.now();
  const attempts: DeliveryAttemptEntry[] = [];
  const finish = (last: AttemptResult): DeliveryResult => {
    options.record(
      logEntry(endpoint, request, options.kind, started, performance.now() - startedMs, attempts),
    );
    return { ok: last.outcome === "ok", attempts: attempts.length, last };
  };
  for (;;) {
    // The entry's time is its first attempt's: one clock reading, not two a millisecond apart.
    const time = attempts.length === 0 ? started : new Date();
    const result = await postOnce(endpoint, request.body, {
      userAgent: options.userAgent,
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    attempts.push({
      attempt: attempts.length + 1,
      time: time.toISOString(),
      // The log knows ok, retry and rejected: a request not built is a failure the sender
      // tries again later (its error says it was not sent), with no status.
      outcome: result.outcome === "unsent" ? "retry" : result.outcome,
      ...("status" in result && result.status !== undefined ? { status_code: result.status } : {}),
      ...(result.outcome === "ok" ? {} : { error: result.error }),
      duration_ms: roundMs(result.ms),
    });
    const wait = waits[attempts.length - 1];
    if (result.outcome !== "retry" || wait === undefined || options.signal?.aborted) return finish(result);
    try {
      await sleep(wait, undefined, options.signal ? { signal: options.signal } : {});
    } catch {
      return finish(result);
    }
  }
}

/** The log entry of a delivery that ended: its outcome is its last attempt's. */
function logEntry(
  endpoint: EndpointConfig,
  request: DeliveryRequest,
  kind: DeliveryKind,
  started: Date,
  ms: number,
  attempts: readonly DeliveryAttemptEntry[],
): DeliveryLogEntry {
  const last = attempts[attempts.length - 1]!;
  const bodyBytes = Buffer.byteLength(request.body, "utf8");
  return {
    time: started.toISOString(),
    endpoint: endpoint.name,
    endpoint_type: endpoint.type,
    kind,
    delivery_id: randomUUID(),
    attempt: last.attempt,
    outcome: last.outcome,
    ...(last.status_code === undefined ? {} : { status_code: last.status_code }),
    ...(last.error === undefined ? {} : { error: last.error }),
    duration_ms: roundMs(ms),
    attempts: [...attempts],
    alert_count: request.alertCount,
    systems: [...request.systems],
    body_digest: `sha256:${createHash("sha256").update(request.body, "utf8").digest("hex")}`,
    body_bytes: bodyBytes,
    ...(bodyBytes <= LOGGED_BODY_MAX ? { body: request.body } : {}),
  };
}

const roundMs = (ms: number) => Math.round(ms * 10) / 10;

/** A failed request in words: fetch's error with its socket cause, and the TLS setting to give. */
export function describeError(err: unknown, endpoint?: EndpointConfig): string {
  if (!(err instanceof Error)) return String(err);
  // fetch wraps the socket error ("fetch failed"); its cause, or the cause's own (a proxy's
  // refusal under "Request was cancelled."), says what happened.
  const first = (err as Error & { cause?: unknown }).cause;
  if (!(first instanceof Error)) return err.message;
  let cause: Error = first;
  while (cause.cause instanceof Error) cause = cause.cause;
  return `${err.message}: ${endpoint ? socketFailure(endpoint, cause) : cause.message}`;
}
