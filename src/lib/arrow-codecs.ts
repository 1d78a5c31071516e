/**
 * Arrow IPC body compression (stack-notes §3): apache-arrow reads and writes LZ4_FRAME and
 * ZSTD bodies through its codec registry but bundles no codec. This registers lz4js (pure
 * JS, LZ4 frame format) and Node's built-in zstd. Servers and readers both call it; calling
 * it again changes nothing.
 */
import { constants, zstdCompressSync, zstdDecompressSync } from "node:zlib";
import { CompressionType, compressionRegistry } from "apache-arrow";
import { compress as lz4Compress, decompress as lz4Decompress } from "lz4js";

/**
 * zstd level 1: on Arrow bodies it measured nearly the ratio of level 3 (stack-notes §3)
 * for less CPU, and the CPU of the serving node is what a stream spends.
 */
const ZSTD_LEVEL = 1;

let registered = false;

export function registerArrowCodecs(): void {
  if (registered) return;
  registered = true;
  compressionRegistry.set(CompressionType.LZ4_FRAME, {
    encode: (data) => lz4Compress(data),
    decode: (data) => lz4Decompress(data),
  });
  compressionRegistry.set(CompressionType.ZSTD, {
    encode: (data) =>
      asBytes(zstdCompressSync(data, { params: { [constants.ZSTD_c_compressionLevel]: ZSTD_LEVEL } })),
    decode: (data) => asBytes(zstdDecompressSync(data)),
  });
}

/** A plain Uint8Array view of a Buffer (Arrow checks the type of what a codec returns). */
function asBytes(buffer: Buffer): Uint8Array {
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}
