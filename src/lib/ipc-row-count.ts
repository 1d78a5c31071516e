import { Message } from "apache-arrow";

/**
 * The rows in `bytes`, one or more encapsulated Arrow IPC messages (a record batch message,
 * with the dictionary batches it needs before it), read from the messages' metadata alone:
 * the bodies are neither decompressed nor decoded. Schema and dictionary messages count 0.
 */
export function ipcRowCount(bytes: Uint8Array): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let rows = 0;
  // Each message: continuation marker, metadata length, metadata, then the body.
  for (let at = 0; at + 8 <= bytes.byteLength;) {
    const metadataLength = view.getInt32(at + 4, true);
    if (metadataLength <= 0) break; // the end-of-stream marker
    const message = Message.decode(bytes.subarray(at + 8, at + 8 + metadataLength));
    if (message.isRecordBatch()) rows += message.header().length;
    at += 8 + metadataLength + Number(message.bodyLength);
  }
  return rows;
}
