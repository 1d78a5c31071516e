/**
 * Arrow IPC stream messages one at a time: the schema message, then one message per record
 * batch, each as its own byte array, so each can travel as one bus message. Concatenated
 * in order and followed by END_OF_STREAM they form an ordinary Arrow IPC stream.
 */
import {
  AsyncByteQueue,
  CompressionType,
  Message,
  RecordBatchStreamWriter,
  type RecordBatch,
  type Schema,
} from "apache-arrow";
import { compressionsDuring, registerArrowCodecs, type Compression } from "./arrow-codecs.ts";

/** The IPC end-of-stream marker: continuation token, then a zero metadata length. */
export const END_OF_STREAM: Uint8Array = Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0);

export type IpcCompression = "none" | "lz4" | "zstd";

const COMPRESSION_TYPES: Record<IpcCompression, CompressionType | null> = {
  none: null,
  lz4: CompressionType.LZ4_FRAME,
  zstd: CompressionType.ZSTD,
};

/** Collects what the writer writes, synchronously, until taken. */
class MessageSink extends AsyncByteQueue {
  private parts: Uint8Array[] = [];
  private size = 0;

  // The writer hands over Uint8Arrays only (its _write converts first).
  override write(value: Parameters<AsyncByteQueue["write"]>[0]): void {
    const part = value as Uint8Array;
    if (part.byteLength === 0) return;
    this.parts.push(part);
    this.size += part.byteLength;
  }

  take(): Uint8Array {
    const out = new Uint8Array(this.size);
    let at = 0;
    for (const part of this.parts) {
      out.set(part, at);
      at += part.byteLength;
    }
    this.parts = [];
    this.size = 0;
    return out;
  }
}

export class IpcMessageEncoder {
  /** The schema message: the first bytes of the stream. */
  readonly schemaMessage: Uint8Array;
  private readonly sink = new MessageSink();
  private readonly writer: RecordBatchStreamWriter;
  private readonly compressed: boolean;

  constructor(schema: Schema, compression: IpcCompression) {
    registerArrowCodecs();
    this.compressed = compression !== "none";
    this.writer = new RecordBatchStreamWriter({ compressionType: COMPRESSION_TYPES[compression] });
    this.writer.reset(this.sink, schema);
    this.schemaMessage = this.sink.take();
  }

  /** One record batch message (its body compressed as configured). The batch must have the schema. */
  encode(batch: RecordBatch): Uint8Array {
    if (!this.compressed) {
      this.writer.write(batch);
      return this.sink.take();
    }
    const made = compressionsDuring(() => this.writer.write(batch));
    const message = this.sink.take();
    setUncompressedLengths(message, made);
    return message;
  }
}

/**
 * Writes the uncompressed length into the 8-byte prefix of each compressed body buffer in
 * `bytes`, as the Arrow format requires. apache-arrow 21's writer puts the compressed length
 * there (apache/arrow-js#470, fixed after 21.2.0): JS readers, which size the output from
 * the codec's frame, do not notice, but Arrow C++ and PyArrow size it from the prefix and
 * refuse the batch. Once the writer writes the right length, this writes it again.
 *
 * `bytes` holds the dictionary batch messages the record batch needed, then the record
 * batch message. `made` lists the writer's compressions: the record batch's buffers first
 * (it assembles the batch before its dictionaries), then each dictionary's, each in body
 * order, empty buffers excepted. A buffer stored uncompressed (prefix -1) stays as it is.
 */
function setUncompressedLengths(bytes: Uint8Array, made: readonly Compression[]): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  /** The body offsets and lengths of each message's non-empty buffers, in message order. */
  const messages: { start: number; length: number }[][] = [];
  let recordBatch = -1;
  for (const { message, body } of ipcMessages(bytes)) {
    let header;
    if (message.isRecordBatch()) {
      header = message.header();
      recordBatch = messages.length;
    } else if (message.isDictionaryBatch()) {
      header = message.header().data;
    } else {
      throw new Error(`IPC encoder: unexpected message header type ${message.headerType}`);
    }
    messages.push(
      header.buffers
        .filter((region) => region.length > 0)
        .map((region) => ({ start: body + region.offset, length: region.length })),
    );
  }
  if (messages.length === 0 || recordBatch !== messages.length - 1) {
    throw new Error("IPC encoder: a batch's bytes do not end with its record batch message");
  }
  // The writer's order: the record batch (the last message), then the dictionaries.
  const buffers = [...messages.at(-1)!, ...messages.slice(0, -1).flat()];
  if (buffers.length !== made.length) {
    throw new Error(
      `IPC encoder: ${made.length} buffers were compressed but the body holds ${buffers.length}`,
    );
  }
  buffers.forEach(({ start, length }, i) => {
    const { before, after } = made[i]!;
    if (view.getBigInt64(start, true) === -1n) return;
    if (length - 8 !== after) {
      throw new Error(
        `IPC encoder: body buffer ${i} holds ${length - 8} bytes, its compression made ${after}`,
      );
    }
    view.setBigInt64(start, BigInt(before), true);
  });
}

/**
 * The encapsulated IPC messages in `bytes` (continuation marker, metadata length, metadata,
 * then the body), each decoded from its metadata alone, with the offset its body starts at.
 * Ends at the end of `bytes` or at the end-of-stream marker.
 */
export function* ipcMessages(bytes: Uint8Array): Generator<{ message: Message; body: number }> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = 0; at + 8 <= bytes.byteLength;) {
    const metadataLength = view.getInt32(at + 4, true);
    if (metadataLength <= 0) return;
    const message = Message.decode(bytes.subarray(at + 8, at + 8 + metadataLength));
    const body = at + 8 + metadataLength;
    yield { message, body };
    at = body + Number(message.bodyLength);
  }
}

/**
 * The rows in `bytes`, one or more encapsulated Arrow IPC messages (a record batch message,
 * with the dictionary batches it needs before it), read from the messages' metadata alone:
 * the bodies are neither decompressed nor decoded. Schema and dictionary messages count 0.
 */
export function ipcRowCount(bytes: Uint8Array): number {
  let rows = 0;
  for (const { message } of ipcMessages(bytes)) if (message.isRecordBatch()) rows += message.header().length;
  return rows;
}
