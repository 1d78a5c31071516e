/**
 * Arrow IPC stream messages one at a time: the schema message, then one message per record
 * batch, each as its own byte array, so each can travel as one bus message. Concatenated
 * in order and followed by END_OF_STREAM they form an ordinary Arrow IPC stream.
 */
import {
  AsyncByteQueue,
  CompressionType,
  RecordBatchStreamWriter,
  type RecordBatch,
  type Schema,
} from "apache-arrow";
import { registerArrowCodecs } from "./arrow-codecs.ts";

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

  constructor(schema: Schema, compression: IpcCompression) {
    registerArrowCodecs();
    this.writer = new RecordBatchStreamWriter({ compressionType: COMPRESSION_TYPES[compression] });
    this.writer.reset(this.sink, schema);
    this.schemaMessage = this.sink.take();
  }

  /** One record batch message (its body compressed as configured). The batch must have the schema. */
  encode(batch: RecordBatch): Uint8Array {
    this.writer.write(batch);
    return this.sink.take();
  }
}
