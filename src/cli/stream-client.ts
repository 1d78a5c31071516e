/**
 * The client half of the chunk protocol (protocol/stream-payloads.ts): sends a streaming
 * request with a fresh inbox as reply, decodes each chunk into an Arrow record batch,
 * acknowledges chunks as they are consumed, and ends with the trailer's totals or a typed
 * error. Used by `natsmon query` and `natsmon backup`; talks to the bus API only.
 */
import { createInbox, headers as natsHeaders, type Msg, type NatsConnection } from "@nats-io/nats-core";
import { RecordBatchReader, type RecordBatch, type Schema } from "apache-arrow";
import { ErrorCode, isToken, MonError } from "../domain/index.ts";
import { END_OF_STREAM, registerArrowCodecs, stringifyExact, watchPublishRefusals } from "../lib/index.ts";
import {
  ServiceErrorHeader,
  StreamHeader,
  StreamMessageKind,
  systemIdOf,
  systemSubjects,
  type StreamAck,
  type StreamEndTrailer,
  type StreamErrorTrailer,
} from "../protocol/index.ts";

/** Nobody serves the subject (the bus answered the request with status 503). */
export class NoResponderError extends MonError {
  readonly subject: string;
  constructor(subject: string) {
    super(ErrorCode.Unavailable, `no responder for ${subject}`);
    this.subject = subject;
  }
}

/** The server ended the stream with an error trailer; `code` is the trailer's. */
export class StreamFailedError extends MonError {
  readonly trailer: StreamErrorTrailer;
  constructor(trailer: StreamErrorTrailer) {
    super(knownCode(trailer.code), trailer.description);
    this.trailer = trailer;
  }
}

/**
 * The server refused the request before any chunk: its error trailer came first (a bad
 * request, a catalog not open, a system no node serves: 503).
 */
export class StreamRefusedError extends StreamFailedError {}

/**
 * The bus refused this connection's user a publish the stream needs: the request, or an ack
 * (nats-server answers `Permissions Violation for Publish to "<subject>"`). Without it the
 * request never arrives, or the server, hearing no ack, ends the stream with a 408 after
 * db.query-stream.ack-timeout.
 */
export class PublishRefusedError extends Error {
  readonly subject: string;
  constructor(subject: string) {
    const system = systemIdOf(subject);
    const grant = system !== undefined && isToken(system) ? systemSubjects(system).dbAll : subject;
    super(
      `the bus refused this user permission to publish to ${subject}: ` +
        `grant publish on ${grant} (README, Authorization)`,
    );
    this.name = "PublishRefusedError";
    this.subject = subject;
  }
}

/** No message of the stream arrived within `timeoutMs`. */
export class StreamTimeoutError extends MonError {
  constructor(timeoutMs: number) {
    super(ErrorCode.GatewayTimeout, `no message from the stream within ${timeoutMs} ms`);
  }
}

export interface StreamProgress {
  readonly chunks: number;
  readonly rows: number;
  readonly bytes: number;
}

export interface ReadArrowStreamOptions {
  /** Longest wait for any one message (the first included). */
  readonly timeoutMs: number;
  /** Request headers (Monitor-Api-Version). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Called after each chunk. */
  readonly onProgress?: (progress: StreamProgress) => void;
  /**
   * Ends the wait for the next message at once when it aborts: the read throws the
   * signal's reason and the stream is cancelled on the server.
   */
  readonly signal?: AbortSignal;
}

/**
 * An open stream: iterate it once for the record batches. Breaking off early cancels the
 * stream on the server. Iteration throws StreamFailedError for an error trailer and
 * StreamTimeoutError when the server falls silent, the signal's reason once it aborts.
 */
export interface ArrowStreamReader extends AsyncIterable<RecordBatch> {
  readonly schema: Schema;
  /** Chunk 1's bytes: the IPC schema message. */
  readonly schemaMessage: Uint8Array;
  /**
   * The later chunks' bytes undecoded (one IPC record-batch message each, compressed as
   * the stream was), acknowledged as handed over: for a client that passes the IPC stream
   * on rather than reading it. Iterate either this or the reader itself, once.
   */
  chunks(): AsyncIterable<Uint8Array>;
  /** The end trailer, once iteration has finished normally. */
  readonly totals: StreamEndTrailer | undefined;
}

/**
 * Sends `request` to `subject` and waits for the first chunk (the schema). Throws
 * NoResponderError when nobody serves the subject, StreamFailedError for an error trailer
 * in place of the schema (refused SQL, 503 catalog not open), StreamTimeoutError,
 * PublishRefusedError as soon as the bus refuses the request or an ack for permissions
 * (iteration too), or the signal's reason once it aborts.
 */
export async function readArrowStream(
  nc: NatsConnection,
  subject: string,
  request: unknown,
  options: ReadArrowStreamOptions,
): Promise<ArrowStreamReader> {
  registerArrowCodecs();
  const { signal } = options;
  signal?.throwIfAborted();
  const inbox = createInbox();
  const queue = new MessageQueue();
  const sub = nc.subscribe(inbox, { callback: (err, msg) => queue.push(err ?? msg) });
  const h = natsHeaders();
  for (const [k, v] of Object.entries(options.headers ?? {})) h.set(k, v);
  let ackSubject: string | undefined;
  /** Chunks between two acks: every chunk unless the server names its window. */
  let ackEvery = 1;
  let acked = 0;
  let finished = false;
  const ack = (body: StreamAck) => {
    if (ackSubject) nc.publish(ackSubject, JSON.stringify(body));
    if ("seq" in body) acked = body.seq;
  };
  // Nothing arrives on a closed subscription (the connection closed, say): a wait for it
  // ends there rather than holding its timer, and with it the process, until the timeout.
  // There is nothing to cancel then: either the stream is over or the connection is gone.
  void sub.closed.then(() => {
    finished = true;
    queue.end(new MonError(ErrorCode.Unavailable, "the stream's subscription closed"));
  });
  const onAbort = () => queue.end(signal?.reason as Error);
  signal?.addEventListener("abort", onAbort, { once: true });
  // The bus says so when it refuses a publish (an -ERR, seen in the connection's status):
  // the stream ends then, rather than when the server gives up waiting for acks.
  const refusals = watchPublishRefusals(nc, (refused) => {
    if (refused !== subject && refused !== ackSubject) return;
    finished = true;
    queue.end(new PublishRefusedError(refused));
  });
  const stop = () => {
    void refusals.stop();
    signal?.removeEventListener("abort", onAbort);
    if (!finished) ack({ cancel: true });
    finished = true;
    sub.unsubscribe();
  };

  let schemaMessage: Uint8Array;
  let schema: Schema;
  try {
    nc.publish(subject, stringifyExact(request), { reply: inbox, headers: h });
    const first = await queue.next(options.timeoutMs);
    if (first.headers?.code === 503 && first.data.length === 0) {
      finished = true;
      throw new NoResponderError(subject);
    }
    const kind = kindOf(first);
    if (kind !== StreamMessageKind.Chunk || seqOf(first) !== 1) {
      finished = true;
      throw trailerError(first, kind, StreamRefusedError);
    }
    ackSubject = first.headers?.get(StreamHeader.Ack) || undefined;
    if (!ackSubject) throw new MonError(ErrorCode.Internal, "the stream's first chunk names no ack subject");
    ackEvery = ackInterval(first.headers?.get(StreamHeader.Window));
    schemaMessage = first.data;
    schema = RecordBatchReader.from([schemaMessage, END_OF_STREAM]).open().schema;
    ack({ seq: 1 });
  } catch (err) {
    stop();
    throw err;
  }

  let totals: StreamEndTrailer | undefined;
  const progress = { chunks: 1, rows: 0, bytes: schemaMessage.byteLength };
  options.onProgress?.({ ...progress });

  async function* messages(): AsyncGenerator<Uint8Array> {
    try {
      for (;;) {
        const msg = await queue.next(options.timeoutMs);
        const kind = kindOf(msg);
        if (kind === StreamMessageKind.End) {
          finished = true;
          totals = msg.json<StreamEndTrailer>();
          return;
        }
        if (kind !== StreamMessageKind.Chunk) {
          finished = true;
          throw trailerError(msg, kind);
        }
        const seq = seqOf(msg);
        if (seq !== progress.chunks + 1) {
          throw new MonError(ErrorCode.Internal, `chunk ${seq} arrived where ${progress.chunks + 1} was due`);
        }
        progress.chunks = seq;
        progress.bytes += msg.data.byteLength;
        // Acked as handed over, so the server sends at most a window ahead of what is
        // consumed; every half window, which keeps the server from waiting while costing
        // a quarter of the acks (each ack is a message through the bus and a socket write
        // on both ends).
        if (seq - acked >= ackEvery) ack({ seq });
        yield msg.data;
      }
    } finally {
      stop();
    }
  }

  async function* batches(): AsyncGenerator<RecordBatch> {
    for await (const data of messages()) {
      // One record batch message, read against the schema message of chunk 1.
      const batch = RecordBatchReader.from([schemaMessage, data, END_OF_STREAM]).next().value as
        RecordBatch | undefined;
      progress.rows += batch?.numRows ?? 0;
      options.onProgress?.({ ...progress });
      if (batch) yield batch;
    }
  }

  return {
    schema,
    schemaMessage,
    async *chunks() {
      for await (const data of messages()) {
        options.onProgress?.({ ...progress });
        yield data;
      }
    },
    get totals() {
      return totals;
    },
    [Symbol.asyncIterator]: () => batches(),
  };
}

/**
 * How many chunks to receive between acks for a server window of `window` (header
 * Monitor-Stream-Window): half of it, so the server, which may run a full window ahead of
 * the last ack, still has half a window to send while the next ack travels. Every chunk
 * when the header is missing or malformed.
 */
export function ackInterval(window: string | undefined): number {
  const n = Number(window);
  return Number.isSafeInteger(n) && n >= 2 ? Math.floor(n / 2) : 1;
}

function kindOf(msg: Msg): string | undefined {
  return msg.headers?.get(StreamHeader.Kind) || undefined;
}

function seqOf(msg: Msg): number {
  return Number(msg.headers?.get(StreamHeader.Seq));
}

/** The error for a message that is not the chunk expected: an error trailer, or something else. */
function trailerError(
  msg: Msg,
  kind: string | undefined,
  Failed: typeof StreamFailedError = StreamFailedError,
): MonError {
  if (kind === StreamMessageKind.Error) {
    try {
      return new Failed(msg.json<StreamErrorTrailer>());
    } catch {
      // Fall through: an error trailer whose body is not JSON.
    }
  }
  const code = msg.headers?.get(ServiceErrorHeader.Code);
  if (code) {
    return new Failed({
      status: "error",
      code,
      description: msg.headers?.get(ServiceErrorHeader.Description) ?? "error",
    });
  }
  return new MonError(
    ErrorCode.Internal,
    `unexpected stream message (${kind ?? "no Monitor-Stream header"})`,
  );
}

function knownCode(code: string): ErrorCode {
  const n = Number(code);
  return (Object.values(ErrorCode) as number[]).includes(n) ? (n as ErrorCode) : ErrorCode.Internal;
}

/**
 * Messages of one subscription, awaited one at a time with a timeout, until `end` makes
 * every wait, the current one included, throw its error.
 */
class MessageQueue {
  private readonly items: (Msg | Error)[] = [];
  private waiter: ((item: Msg | Error) => void) | undefined;
  private ended: Error | undefined;

  push(item: Msg | Error): void {
    if (this.ended) return;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      w(item);
    } else {
      this.items.push(item);
    }
  }

  end(error: Error): void {
    this.ended ??= error;
    this.items.length = 0;
    const w = this.waiter;
    this.waiter = undefined;
    w?.(this.ended);
  }

  async next(timeoutMs: number): Promise<Msg> {
    if (this.ended) throw this.ended;
    const queued = this.items.shift();
    const item =
      queued ??
      (await new Promise<Msg | Error>((resolve) => {
        const timer = setTimeout(() => {
          this.waiter = undefined;
          resolve(new StreamTimeoutError(timeoutMs));
        }, timeoutMs);
        this.waiter = (got) => {
          clearTimeout(timer);
          resolve(got);
        };
      }));
    if (item instanceof Error) throw item;
    return item;
  }
}
