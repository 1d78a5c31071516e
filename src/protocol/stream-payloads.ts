/**
 * The chunk protocol of `db.query.stream` and `db.backup.stream` (spec: db.query.stream,
 * db.backup.stream; the fields the spec leaves open are natsmon's design). The client
 * subscribes to an inbox and sends the request with that inbox as reply; the server
 * answers on it with Arrow IPC chunks, then exactly one trailer. The client acks chunks on
 * the ack subject named by chunk 1: `$MON.sys.<system_id>.db.stream-ack.<token>`
 * (systemSubjects' dbStreamAck), fresh for each stream and inside the system's db space,
 * so the grant that lets a user send the request (`$MON.sys.<system_id>.db.>` or
 * `$MON.sys.*.db.>`) lets it publish its acks, and the server's subscription to it is
 * covered by natsmon's own `$MON.>`.
 */

/** Headers of the messages the server sends on the reply inbox. */
export const StreamHeader = {
  /** Every message: `chunk`, `end` or `error` (StreamMessageKind). */
  Kind: "Monitor-Stream",
  /** Chunks only: 1, 2, 3, … */
  Seq: "Monitor-Stream-Seq",
  /**
   * Chunk 1 only: the subject acks and cancels go to, `$MON.sys.<system_id>.db.stream-ack.<token>`.
   * A client publishes to whatever subject this names.
   */
  Ack: "Monitor-Stream-Ack",
  /**
   * Chunk 1 only: the stream's window, the most chunks the server sends unacknowledged. A
   * client may ack every half window instead of every chunk (acks are cumulative).
   */
  Window: "Monitor-Stream-Window",
} as const;

export const StreamMessageKind = { Chunk: "chunk", End: "end", Error: "error" } as const;
export type StreamMessageKind = (typeof StreamMessageKind)[keyof typeof StreamMessageKind];

/**
 * Metadata of each Arrow field of a streamed result: the column's DuckDB type as DuckDB
 * writes it, and, for Utf8 columns standing in for a type Arrow is not given, how the text
 * is encoded (`json` for LIST/STRUCT/MAP/ARRAY/UNION/VARIANT values, `text` for the rest).
 */
export const ArrowFieldMetadata = {
  DuckDBType: "natsmon.duckdb_type",
  Encoding: "natsmon.encoding",
} as const;

/** Micro error headers, also set on an error trailer so a plain request sees a service error. */
export const ServiceErrorHeader = {
  Code: "Nats-Service-Error-Code",
  Description: "Nats-Service-Error",
} as const;

/** Body compression of the record batch chunks (config `db.query-stream.compression`). */
export const STREAM_COMPRESSIONS = ["none", "lz4", "zstd"] as const;
export type StreamCompression = (typeof STREAM_COMPRESSIONS)[number];

/** Fields every streaming request may carry. */
export interface StreamOptionsRequest {
  /** Default: `db.query-stream.compression`. */
  compression?: StreamCompression;
  /** Chunks in flight the client wants at most (>= 1); capped at `db.query-stream.window`. */
  window?: number;
}

/** `db.query.stream` request. */
export interface QueryStreamRequest extends StreamOptionsRequest {
  sql: string;
  /** Positional parameters, as in db.query. */
  params?: unknown[];
}

/** `db.backup.stream` request (spec: db.backup.stream). */
export interface BackupStreamRequest extends StreamOptionsRequest {
  schema: string;
  table: string;
  /** RFC 3339, inclusive. */
  start_epoch?: string;
  /** RFC 3339. */
  end_epoch?: string;
}

/**
 * Client → ack subject. `seq` is cumulative: every chunk up to it was received. `cancel`
 * stops the stream: the server frees the scan and sends nothing more.
 */
export type StreamAck = { seq: number } | { cancel: true };

/** Body of the `end` trailer. `chunks` counts chunk messages (the schema chunk too), `bytes` their bodies. */
export interface StreamEndTrailer {
  status: "end";
  rows: number;
  chunks: number;
  bytes: number;
}

/**
 * Body of the `error` trailer; codes as db.query's (400, 408, 413, 500, 503). It ends the
 * stream wherever the failure happens: in place of chunk 1 for a refused request or a
 * schema over max_payload (then it is the only message), or after the chunks sent so far,
 * chunk 1 (the schema) at least: a row over max_payload or
 * `max-rows` (413), a failure mid-scan (400), a shutdown (408), and a client that left a
 * full window unacknowledged for `db.query-stream.ack-timeout` (408; a client that went
 * away never reads it).
 */
export interface StreamErrorTrailer {
  status: "error";
  code: string;
  description: string;
}

export type StreamTrailer = StreamEndTrailer | StreamErrorTrailer;
