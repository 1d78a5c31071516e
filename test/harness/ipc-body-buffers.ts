/**
 * Reads the body buffers of encapsulated Arrow IPC messages byte by byte, to check what the
 * Arrow format says of compressed bodies: each buffer starts with its uncompressed length
 * (int64, little-endian), or -1 when it is stored uncompressed. Arrow C++ and PyArrow size
 * their output from that prefix.
 */
import assert from "node:assert/strict";
import { zstdDecompressSync } from "node:zlib";
import { Message } from "apache-arrow";
import { decompress as lz4Decompress } from "lz4js";

export interface BodyBuffer {
  readonly prefix: bigint;
  /** The bytes after the prefix. */
  readonly data: Uint8Array;
}

/** Each non-empty body buffer of the messages in `bytes` (record and dictionary batches). */
export function ipcBodyBuffers(bytes: Uint8Array): BodyBuffer[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const buffers: BodyBuffer[] = [];
  for (let at = 0; at < bytes.byteLength;) {
    assert.equal(view.getUint32(at, true), 0xffffffff, "continuation marker");
    const metadataLength = view.getInt32(at + 4, true);
    const message = Message.decode(bytes.subarray(at + 8, at + 8 + metadataLength));
    const header = message.isRecordBatch()
      ? message.header()
      : message.isDictionaryBatch()
        ? message.header().data
        : assert.fail(`header type ${message.headerType}`);
    const body = at + 8 + metadataLength;
    for (const region of header.buffers) {
      if (region.length === 0) continue;
      const start = body + region.offset;
      buffers.push({
        prefix: view.getBigInt64(start, true),
        data: bytes.subarray(start + 8, start + region.length),
      });
    }
    at = body + Number(message.bodyLength);
  }
  return buffers;
}

/**
 * Asserts that every compressed body buffer of `messages` holds its uncompressed length in
 * its prefix (decompressed here with the codec alone, no Arrow reader involved). Returns
 * how many buffers were compressed and how many stored as they are.
 */
export function assertLengthPrefixes(
  messages: readonly Uint8Array[],
  compression: "lz4" | "zstd",
): { compressed: number; stored: number } {
  let compressed = 0;
  let stored = 0;
  for (const message of messages) {
    for (const { prefix, data } of ipcBodyBuffers(message)) {
      if (prefix === -1n) {
        stored++;
        continue;
      }
      compressed++;
      const plain = compression === "lz4" ? lz4Decompress(data) : zstdDecompressSync(data);
      assert.equal(prefix, BigInt(plain.byteLength), "prefix = length after decompression");
      assert.ok(data.byteLength < plain.byteLength, "compressed only where it shrinks");
    }
  }
  return { compressed, stored };
}
