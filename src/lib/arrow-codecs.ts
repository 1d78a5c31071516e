/**
 * Arrow IPC body compression (stack-notes §3): apache-arrow reads and writes LZ4_FRAME and
 * ZSTD bodies through its codec registry but bundles no codec. This registers lz4js (pure
 * JS, LZ4 frame format) and Node's built-in zstd. Servers and readers both call it; calling
 * it again changes nothing.
 */
import { constants, zstdCompressSync, zstdDecompressSync } from "node:zlib";
import { CompressionType, compressionRegistry } from "apache-arrow";
import { compress as lz4Compress, decompress as lz4Decompress, decompressFrame } from "lz4js";

/**
 * zstd level 1: on Arrow bodies it measured nearly the ratio of level 3 (stack-notes §3)
 * for less CPU, and the CPU of the serving node is what a stream spends.
 */
const ZSTD_LEVEL = 1;

let registered = false;
/** While set, each compression's length in and out, in call order. */
let compressions: Compression[] | undefined;

export interface Compression {
  /** Bytes handed to the codec. */
  readonly before: number;
  /** Bytes it returned. */
  readonly after: number;
}

export function registerArrowCodecs(): void {
  if (registered) return;
  registered = true;
  compressionRegistry.set(CompressionType.LZ4_FRAME, {
    encode: (data) => recorded(data, lz4Compress(data)),
    decode: lz4Decode,
  });
  compressionRegistry.set(CompressionType.ZSTD, {
    encode: (data) =>
      recorded(
        data,
        asBytes(zstdCompressSync(data, { params: { [constants.ZSTD_c_compressionLevel]: ZSTD_LEVEL } })),
      ),
    decode: (data) => asBytes(zstdDecompressSync(data)),
  });
}

/**
 * Runs `write` (synchronous: an IPC writer's write) and returns the compressions the codecs
 * made meanwhile, in call order.
 */
export function compressionsDuring(write: () => void): Compression[] {
  const made: Compression[] = [];
  compressions = made;
  try {
    write();
  } finally {
    compressions = undefined;
  }
  return made;
}

function recorded(data: Uint8Array, out: Uint8Array): Uint8Array {
  compressions?.push({ before: data.byteLength, after: out.byteLength });
  return out;
}

/**
 * lz4js sizes its output from the frame when not told the size, and lz4js frames carry
 * none, so it allocates 4 MiB per block and decodes 4x slower. The size is known, though:
 * an Arrow IPC compressed buffer is its uncompressed length (int64) followed by the frame,
 * and Arrow hands the codec the frame as a view just past that length. The decoded size
 * is checked, and anything unexpected falls back to the unsized decode: so do streams from
 * apache-arrow 21's own writer, which puts the compressed length there (arrow-ipc.ts).
 */
function lz4Decode(data: Uint8Array): Uint8Array {
  if (data.byteOffset >= 8) {
    const expected = Number(new DataView(data.buffer, data.byteOffset - 8, 8).getBigInt64(0, true));
    if (expected > 0 && expected <= MAX_SIZED_DECODE) {
      const out = new Uint8Array(expected);
      if (decompressFrame(data, out) === expected) return out;
    }
  }
  return lz4Decompress(data);
}

/** Larger claimed sizes are not trusted for an allocation up front. */
const MAX_SIZED_DECODE = 1 << 30;

/** A plain Uint8Array view of a Buffer (Arrow checks the type of what a codec returns). */
function asBytes(buffer: Buffer): Uint8Array {
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}
