/**
 * The server half of the chunk protocol (protocol/stream-payloads.ts): a scan's Arrow
 * record batches go to the reply inbox as IPC chunks, never more than `window` of them
 * unacknowledged, each small enough for the bus; then one trailer. A client that stops
 * acking is taken as gone: the scan is stopped, its connection freed, and a 408 trailer
 * sent that a client that was only slow reads after the chunks it already has.
 */
import { headers, nuid, type Msg, type NatsConnection } from "@nats-io/nats-core";
import type { RecordBatch, Schema } from "apache-arrow";
import { ErrorCode, MonError, QueryTimeoutError, TooManyRowsError } from "../domain/index.ts";
import { IpcMessageEncoder, type Logger } from "../lib/index.ts";
import {
  ServiceErrorHeader,
  StreamHeader,
  StreamMessageKind,
  systemSubjects,
  type StreamCompression,
  type StreamEndTrailer,
  type StreamErrorTrailer,
} from "../protocol/index.ts";
import { boundErrorText, errorDescription } from "./adapter.ts";

/** What the sender reads from: catalog/'s ArrowScan, seen through this port. */
export interface ArrowBatchSource {
  readonly schema: Schema;
  /** Aborts when the source must stop (shutdown); the next next() call then throws. */
  readonly stopped?: AbortSignal;
  next(maxRows: number): Promise<RecordBatch | undefined>;
  close(): Promise<void>;
}

export interface ArrowStreamOptions {
  /** Where the client acks and cancels (streamAckSubject: in the system's db space). */
  readonly ackSubject: string;
  /** Chunks in flight at most (already capped by the endpoint's configuration). */
  readonly window: number;
  /** With a full window, how long without an ack that advances before taking the client as gone. */
  readonly ackTimeoutMs: number;
  /** Rows allowed before the 413 trailer; 0: no limit (db.backup.stream). */
  readonly maxRows: number;
  /** Names the limit in the 413 description. */
  readonly maxRowsSetting?: string;
  readonly compression: StreamCompression;
  readonly log: Logger;
}

/**
 * How a stream ended, for logs and tests; the client learns it from the trailer (`gone`:
 * the 408 trailer, `cancelled`: nothing).
 */
export type StreamOutcome =
  | StreamEndTrailer
  | { status: "error"; code: number; description: string }
  | { status: "cancelled"; rows: number; chunks: number }
  | { status: "gone"; rows: number; chunks: number };

/** Room left in max_payload for the chunk headers (kind, seq, ack subject) and protocol framing. */
const HEADER_ROOM = 1024;
/** The first batch's rows, before any measured bytes per row: one DuckDB chunk. */
const FIRST_BATCH_ROWS = 2048;
/**
 * Chunks aim at about this size even when max_payload allows more: 1M rows of 100 bytes
 * streamed in 1.4 s as 1 MiB chunks against 2.1 s as 5 MiB ones (the embedded bus allows
 * 8 MiB) and 2.6 s as 256 KiB ones: big messages cost the client's reader dearly.
 */
const CHUNK_TARGET_BYTES = 1024 * 1024;
/**
 * A chunk over this many times the target is split even when the bus would take it (the
 * first batch, sized before any bytes were measured, or a sudden run of wide rows); one
 * near the target is sent as encoded, as re-encoding it would cost more than it saves.
 */
const SPLIT_OVER_TARGET = 2;
/** Batches aim below the budget, so a batch a little denser than the last still fits whole. */
const FILL = 0.8;
const MAX_BATCH_ROWS = 1 << 20;

/**
 * A fresh ack subject for one stream of `systemId`: `db.stream-ack.<token>` in the system's
 * db space, so the grant that lets a user send the request (`db.>`) lets it ack too (README:
 * Authorization); no natsmon subscription on a wildcard matches it.
 */
export function streamAckSubject(systemId: string): string {
  return systemSubjects(systemId).dbStreamAck(nuid.next());
}

/**
 * Streams what `open` yields to `replyTo`. Never throws: failures become the error trailer
 * (a MonError keeps its code; anything else is logged and masked as 500).
 */
export async function serveArrowStream(
  nc: NatsConnection,
  replyTo: string,
  open: (signal: AbortSignal) => Promise<ArrowBatchSource>,
  options: ArrowStreamOptions,
): Promise<StreamOutcome> {
  const { log } = options;
  const abort = new AbortController();
  const { ackSubject } = options;
  const acks = new AckInbox(
    nc,
    ackSubject,
    () => abort.abort(new Error("the client cancelled the stream")),
    // Once per stream: a client acking chunks it was never sent is broken, and its acks
    // keep coming; the clamp keeps the window, the log says whose client to fix.
    (claimed) =>
      log.warn(
        { reply: replyTo, ack_seq: claimed, sent: acks.sent },
        "stream client acknowledged chunks not yet sent; acks are capped at the last chunk sent",
      ),
  );
  const budget = Math.max(nc.info?.max_payload ?? 1024 * 1024, 2 * HEADER_ROOM) - HEADER_ROOM;
  const target = Math.min(budget, CHUNK_TARGET_BYTES);
  let scan: ArrowBatchSource | undefined;
  let seq = 0;
  let rows = 0;
  let bytes = 0;

  /** Sends chunk `seq + 1` once the window has room; false when the client cancelled or went away. */
  const send = async (body: Uint8Array): Promise<boolean> => {
    const next = seq + 1;
    const room = await acks.waitForRoom(next, options.window, options.ackTimeoutMs);
    if (room === "stopped") throw stopError(scan?.stopped);
    if (room !== "room") return false;
    const h = headers();
    h.set(StreamHeader.Kind, StreamMessageKind.Chunk);
    h.set(StreamHeader.Seq, String(next));
    if (next === 1) {
      h.set(StreamHeader.Ack, ackSubject);
      h.set(StreamHeader.Window, String(options.window));
    }
    nc.publish(replyTo, body, { headers: h });
    seq = next;
    acks.sent = next;
    bytes += body.byteLength;
    return true;
  };
  const stopped = (): StreamOutcome => {
    if (acks.cancelled) return { status: "cancelled", rows, chunks: seq };
    log.warn(
      { reply: replyTo, sent: seq, acked: acks.acked, ack_timeout_ms: options.ackTimeoutMs },
      "stream client stopped acknowledging; scan stopped",
    );
    // A client that vanished never reads this; one that was only slow finds it after the
    // chunks it already has, and learns why the stream ended instead of waiting for more.
    publishTrailer(nc, replyTo, {
      status: "error",
      code: String(ErrorCode.Timeout),
      description:
        `the stream was stopped after chunk ${seq}: no acknowledgement came for ` +
        `db.query-stream.ack-timeout (${options.ackTimeoutMs} ms) while ${options.window} ` +
        `chunk${options.window === 1 ? " was" : "s were"} unacknowledged; read the stream ` +
        "faster (ack as chunks are consumed), or raise db.query-stream.ack-timeout",
    });
    return { status: "gone", rows, chunks: seq };
  };

  // A shutdown must not wait for a slow client's acks: the stream ends with its trailer.
  const release = () => acks.release();
  try {
    scan = await open(abort.signal);
    // The source's signal lives as long as the catalog: the listener goes in `finally`, or
    // it would keep every finished stream's scan (and its buffers) alive.
    scan.stopped?.addEventListener("abort", release, { once: true });
    if (scan.stopped?.aborted) acks.release();
    const encoder = new IpcMessageEncoder(scan.schema, options.compression);
    if (encoder.schemaMessage.byteLength > budget) {
      // The bus would refuse the publish (a 500 otherwise): column names of megabytes.
      throw new MonError(
        ErrorCode.TooLarge,
        `the result's schema (its column names and types) takes ${encoder.schemaMessage.byteLength} bytes, ` +
          `more than the bus's max_payload allows (${budget} bytes of data per message); use shorter column names or fewer columns`,
      );
    }
    if (!(await send(encoder.schemaMessage))) return stopped();
    let batchRows = FIRST_BATCH_ROWS;
    for (;;) {
      const limit = options.maxRows > 0 ? Math.min(batchRows, options.maxRows - rows + 1) : batchRows;
      const batch = await scan.next(limit);
      if (abort.signal.aborted) return stopped();
      if (!batch) break;
      if (options.maxRows > 0 && rows + batch.numRows > options.maxRows) {
        throw new TooManyRowsError(
          `the result has more than ${options.maxRows} rows (${options.maxRowsSetting ?? "max-rows"}); add a LIMIT`,
        );
      }
      const messages = encodeFitting(encoder, batch, budget, target);
      for (const message of messages) {
        if (!(await send(message.body))) return stopped();
        rows += message.rows;
      }
      // Size the next batch from the density of this one.
      const perRow = messages.reduce((n, m) => n + m.body.byteLength, 0) / batch.numRows;
      batchRows = Math.max(1, Math.min(MAX_BATCH_ROWS, Math.floor((target * FILL) / Math.max(perRow, 1))));
    }
    const end: StreamEndTrailer = { status: "end", rows, chunks: seq, bytes };
    publishTrailer(nc, replyTo, end);
    return end;
  } catch (err) {
    if (abort.signal.aborted) return stopped();
    const failure = asFailure(err, log, replyTo);
    const trailer: StreamErrorTrailer = {
      status: "error",
      code: String(failure.code),
      description: failure.message,
    };
    publishTrailer(nc, replyTo, trailer);
    return { status: "error", code: failure.code, description: failure.message };
  } finally {
    scan?.stopped?.removeEventListener("abort", release);
    acks.close();
    await scan?.close();
  }
}

/** Why a source stopped: its signal's reason when it is a MonError, else a 408 (shutdown). */
function stopError(stopped: AbortSignal | undefined): MonError {
  const reason: unknown = stopped?.reason;
  return reason instanceof MonError ? reason : new QueryTimeoutError("the stream was stopped: shutting down");
}

/** Sends the error trailer for a request refused before any scan started (bad request, 503). */
export function sendStreamError(
  nc: NatsConnection,
  replyTo: string,
  err: unknown,
  log: Logger,
): StreamOutcome {
  const failure = asFailure(err, log, replyTo);
  publishTrailer(nc, replyTo, { status: "error", code: String(failure.code), description: failure.message });
  return { status: "error", code: failure.code, description: failure.message };
}

function asFailure(err: unknown, log: Logger, replyTo: string): { code: number; message: string } {
  if (err instanceof MonError) return { code: err.code, message: err.message };
  log.error({ err, reply: replyTo }, "stream failed with an internal error");
  return { code: 500, message: "internal server error" };
}

function publishTrailer(
  nc: NatsConnection,
  replyTo: string,
  trailer: StreamEndTrailer | StreamErrorTrailer,
): void {
  const h = headers();
  if (trailer.status === "end") {
    h.set(StreamHeader.Kind, StreamMessageKind.End);
  } else {
    h.set(StreamHeader.Kind, StreamMessageKind.Error);
    h.set(ServiceErrorHeader.Code, trailer.code);
    h.set(ServiceErrorHeader.Description, errorDescription(trailer.description) || "error");
    // The full text rides in the body; cut to what the bus carries, or the trailer is refused
    // and the client waits out its timeout instead of reading the error.
    const full = boundErrorText(trailer.description, nc.info?.max_payload);
    if (full !== trailer.description) {
      trailer = { ...trailer, description: full ?? errorDescription(trailer.description) };
    }
  }
  nc.publish(replyTo, JSON.stringify(trailer), { headers: h });
}

/**
 * Encodes `batch` as one message, or, when that is over `budget` or well over `target`, as
 * several of about `target` each (rows split evenly, each part checked again). A single
 * row is never split: over the budget it cannot travel at all (413), under it it goes alone.
 */
function encodeFitting(
  encoder: IpcMessageEncoder,
  batch: RecordBatch,
  budget: number,
  target: number,
): { body: Uint8Array; rows: number }[] {
  const body = encoder.encode(batch);
  if (body.byteLength <= Math.min(budget, SPLIT_OVER_TARGET * target)) {
    return [{ body, rows: batch.numRows }];
  }
  if (batch.numRows === 1) {
    if (body.byteLength <= budget) return [{ body, rows: 1 }];
    throw new TooManyRowsError(
      `a row of the result is larger than the bus's max_payload (${budget} bytes of data per message)`,
    );
  }
  const parts = Math.min(batch.numRows, Math.ceil(body.byteLength / target));
  const rows = Math.ceil(batch.numRows / parts);
  const messages: { body: Uint8Array; rows: number }[] = [];
  for (let from = 0; from < batch.numRows; from += rows) {
    const part = batch.slice(from, Math.min(from + rows, batch.numRows));
    messages.push(...encodeFitting(encoder, part, budget, target));
  }
  return messages;
}

/**
 * The stream's ack subject: cumulative acks and cancel, and waiting for window room.
 *
 * Only progress counts: an ack is clamped to the last chunk sent (a client cannot
 * acknowledge what it never got, so acking ahead cannot open the window), and only an ack
 * that then advances `acked` wakes the sender and restarts the ack timeout. Stale,
 * duplicate or malformed messages change nothing, so a client sending them without ever
 * advancing is still taken as gone once the timeout passes.
 */
class AckInbox {
  acked = 0;
  /** The highest chunk published so far: the most an ack can cover. */
  sent = 0;
  cancelled = false;
  /** Set when the source stops: waiting for room ends so the failure can be reported. */
  private released = false;
  private warnedAhead = false;
  private wake: (() => void) | undefined;
  private readonly sub;

  constructor(nc: NatsConnection, subject: string, onCancel: () => void, onAhead: (seq: number) => void) {
    this.sub = nc.subscribe(subject, {
      callback: (_err, msg) => {
        const ack = parseAck(msg);
        if (ack === "cancel") {
          this.cancelled = true;
          onCancel();
          this.wake?.();
          return;
        }
        if (ack === undefined) return;
        if (ack > this.sent && !this.warnedAhead) {
          this.warnedAhead = true;
          onAhead(ack);
        }
        const covered = Math.min(ack, this.sent);
        if (covered > this.acked) {
          this.acked = covered;
          this.wake?.();
        }
      },
    });
  }

  /**
   * Resolves once chunk `seq` may be sent (`seq - acked <= window`), or the client
   * cancelled, or `timeoutMs` passed with a full window and no ack advancing `acked`.
   */
  async waitForRoom(
    seq: number,
    window: number,
    timeoutMs: number,
  ): Promise<"room" | "cancelled" | "gone" | "stopped"> {
    while (!this.cancelled && !this.released && seq - this.acked > window) {
      const heard = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), timeoutMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve(true);
        };
      });
      this.wake = undefined;
      if (!heard) return "gone";
    }
    return this.cancelled ? "cancelled" : this.released ? "stopped" : "room";
  }

  /** Ends every wait for room from now on. */
  release(): void {
    this.released = true;
    this.wake?.();
  }

  close(): void {
    this.wake?.();
    this.sub.unsubscribe();
  }
}

/** `{"seq": n}` → n, `{"cancel": true}` → "cancel"; anything else is ignored. */
function parseAck(msg: Msg): number | "cancel" | undefined {
  try {
    const body = msg.json<{ seq?: unknown; cancel?: unknown }>();
    if (body.cancel === true) return "cancel";
    return typeof body.seq === "number" && Number.isSafeInteger(body.seq) ? body.seq : undefined;
  } catch {
    return undefined;
  }
}
