/**
 * Streaming endpoints. Unlike request/reply handlers they answer with many messages on the
 * request's reply inbox, published by serveArrowStream, and never `respond`: errors are
 * the in-band error trailer (spec: Errors, in-band errors).
 */
import type { NatsConnection } from "@nats-io/nats-core";
import { BadRequestError } from "../domain/index.ts";
import type { Logger } from "../lib/index.ts";
import { STREAM_COMPRESSIONS, type QueryRequest, type StreamCompression } from "../protocol/index.ts";
import type { ServiceHandler } from "@nats-io/services";
import { checkVersion, parseJsonRequest, requestOf, type ApiRequest } from "./adapter.ts";
import { parseQueryRequest } from "./db-handlers.ts";
import {
  sendStreamError,
  serveArrowStream,
  streamAckSubject,
  type ArrowBatchSource,
  type StreamOutcome,
} from "./stream-sender.ts";

/** What a streaming handler gets: the request, where to stream to, and the connection to stream on. */
export interface StreamContext {
  /** The system whose endpoint was asked: acks go to a subject in its db space. */
  readonly systemId: string;
  readonly request: ApiRequest;
  readonly replyTo: string;
  readonly nc: NatsConnection;
  readonly log: Logger;
}

/** A streaming endpoint; `serve` never throws (failures are trailers). */
export interface StreamHandler {
  readonly kind: "stream";
  serve(context: StreamContext): Promise<StreamOutcome>;
}

/**
 * The adapter of streaming endpoints: the handler publishes to the reply inbox itself and
 * turns every failure into an error trailer, so nothing is ever `respond`ed here.
 */
export function adaptStream(
  nc: NatsConnection,
  systemId: string,
  handler: StreamHandler,
  log: Logger,
): ServiceHandler {
  return (err, msg) => {
    if (err) {
      log.error({ err }, "service endpoint failed");
      return;
    }
    const replyTo = msg.reply;
    if (!replyTo) {
      log.warn({ subject: msg.subject }, "streaming request without a reply inbox ignored");
      return;
    }
    try {
      checkVersion(msg);
    } catch (error) {
      sendStreamError(nc, replyTo, error, log);
      return;
    }
    handler.serve({ systemId, request: requestOf(msg), replyTo, nc, log }).catch((error: unknown) => {
      log.error({ err: error, subject: msg.subject }, "stream handler failed");
    });
  };
}

/** The stream settings of an endpoint (`db.query-stream.*`). */
export interface StreamLimits {
  readonly window: number;
  readonly maxRows: number;
  readonly compression: StreamCompression;
  readonly ackTimeoutMs: number;
}

/** The catalog as db.query.stream needs it (node/ adapts catalog/ to this). */
export interface QueryStreamPort {
  readonly limits: StreamLimits;
  /** Starts a read-only scan; throws 400 for refused SQL, 503 when the catalog is not open. */
  open(request: QueryRequest, signal: AbortSignal): Promise<ArrowBatchSource>;
}

/** `db.query.stream` (spec: db.query.stream): read-only SQL, streamed as Arrow IPC chunks. */
export function dbQueryStreamHandler(port: QueryStreamPort): StreamHandler {
  return streamEndpoint(port.limits, parseQueryRequest, (query, signal) => port.open(query, signal), {
    maxRows: port.limits.maxRows,
    maxRowsSetting: "db.query-stream.max-rows",
  });
}

/**
 * A streaming endpoint from its request parser and its scan: a request that does not parse
 * (or asks for an unknown compression or a bad window) ends as an error trailer; the rest
 * is serveArrowStream under the endpoint's limits and row cap (0: none).
 */
export function streamEndpoint<R>(
  limits: StreamLimits,
  parse: (body: Record<string, unknown>) => R,
  open: (request: R, signal: AbortSignal) => Promise<ArrowBatchSource>,
  rowCap: { readonly maxRows: number; readonly maxRowsSetting?: string },
): StreamHandler {
  return {
    kind: "stream",
    serve: async ({ systemId, request, replyTo, nc, log }) => {
      let parsed;
      try {
        const body = parseJsonRequest(request.data);
        parsed = { request: parse(body), ...streamOptions(body, limits) };
      } catch (err) {
        return sendStreamError(nc, replyTo, err, log);
      }
      return serveArrowStream(nc, replyTo, (signal) => open(parsed.request, signal), {
        ackSubject: streamAckSubject(systemId),
        window: parsed.window,
        compression: parsed.compression,
        ackTimeoutMs: limits.ackTimeoutMs,
        ...rowCap,
        log,
      });
    },
  };
}

/**
 * The `compression` and `window` fields every streaming request may carry: compression
 * defaults to the configured one; a window is at least 1 and at most the configured one.
 */
export function streamOptions(
  body: Record<string, unknown>,
  limits: StreamLimits,
): { window: number; compression: StreamCompression } {
  const { compression, window } = body;
  if (compression !== undefined && !STREAM_COMPRESSIONS.includes(compression as StreamCompression)) {
    throw new BadRequestError(`compression must be one of ${STREAM_COMPRESSIONS.join(", ")}`);
  }
  if (window !== undefined && (typeof window !== "number" || !Number.isSafeInteger(window) || window < 1)) {
    throw new BadRequestError("window must be an integer of at least 1");
  }
  return {
    window: Math.min(window ?? limits.window, limits.window),
    compression: (compression as StreamCompression | undefined) ?? limits.compression,
  };
}
