/**
 * Growable buffers shared by the column builders of arrow-columns.ts: bytes, and Arrow
 * validity bitmaps filled from DuckDB's validity masks (the same bits, LSB first).
 */
import duckdb from "@duckdb/node-bindings";
import type { DuckDBDataChunk } from "@duckdb/node-api";
import type { Data, DataType } from "apache-arrow";

/** Accumulates rows of one result column across DuckDB chunks; `finish` hands out the Data. */
export interface ColumnBuilder {
  readonly type: DataType;
  /** For a Utf8 column standing in for another type: how its values are written. */
  readonly encoding?: "json" | "text";
  append(chunk: DuckDBDataChunk, column: number, offset: number, count: number): void;
  /**
   * The rows appended since the last finish, as one Arrow Data; the builder starts over,
   * reusing the Data's buffers: encode or copy the Data before the next append.
   */
  finish(): Data;
}

export const INITIAL_CAPACITY = 4096;

/** A byte buffer that grows by doubling. */
export class Bytes {
  buf = new Uint8Array(INITIAL_CAPACITY);
  length = 0;

  reserve(extra: number): void {
    const need = this.length + extra;
    if (need <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < need) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }

  push(bytes: Uint8Array): void {
    this.reserve(bytes.length);
    this.buf.set(bytes, this.length);
    this.length += bytes.length;
  }

  /**
   * The bytes written so far (at offset 0 of their buffer, so aligned), and start over in
   * the same buffer: what was taken stays valid only until the next write. A fresh buffer
   * per batch costs a 1M-row stream hundreds of MB of allocation and the collections
   * that follow.
   */
  take(): Uint8Array {
    const out = this.buf.subarray(0, this.length);
    this.length = 0;
    return out;
  }
}

/** Zero bits per byte value. */
const ZEROS = Uint8Array.from({ length: 256 }, (_, b) => {
  let zeros = 0;
  for (let bit = 0; bit < 8; bit++) if ((b & (1 << bit)) === 0) zeros++;
  return zeros;
});

/** Whether `row` is valid (not NULL) in a DuckDB validity mask; a null mask means every row is. */
export function rowValid(mask: Uint8Array | null, row: number): boolean {
  return mask === null || (mask[row >> 3]! & (1 << (row & 7))) !== 0;
}

/**
 * Zeroes the `width`-byte values at `start` of `out` whose rows `mask` marks NULL. DuckDB
 * leaves whatever its buffer held under a NULL (heap addresses among it): copied as is, it
 * would reach clients, and identical results would differ byte for byte.
 */
export function zeroNullSlots(
  out: Uint8Array,
  start: number,
  width: number,
  mask: Uint8Array | null,
  offset: number,
  count: number,
): void {
  if (mask === null) return;
  for (let i = 0; i < count; i++) {
    if (!rowValid(mask, offset + i)) out.fill(0, start + i * width, start + (i + 1) * width);
  }
}

/** Arrow validity bitmap of the appended rows, built from DuckDB's validity masks. */
export class Validity {
  private bits = new Bytes();
  private rows = 0;
  nullCount = 0;

  /** DuckDB's validity of a vector (null when every row is valid). */
  static of(vector: duckdb.Vector, end: number): Uint8Array | null {
    return duckdb.vector_get_validity(vector, Math.ceil(end / 64) * 8);
  }

  append(mask: Uint8Array | null, offset: number, count: number): void {
    const start = this.rows;
    this.bits.reserve(Math.ceil((start + count) / 8) - this.bits.length + 1);
    const out = this.bits.buf;
    if (mask === null && start % 8 === 0) {
      out.fill(0xff, start / 8, Math.ceil((start + count) / 8));
    } else if (mask !== null && start % 8 === 0 && offset % 8 === 0) {
      // The common case, whole chunks: DuckDB's bytes are Arrow's bytes.
      const bytes = Math.ceil(count / 8);
      out.set(mask.subarray(offset / 8, offset / 8 + bytes), start / 8);
      const full = Math.floor(count / 8);
      for (let i = 0; i < full; i++) this.nullCount += ZEROS[out[start / 8 + i]!]!;
      for (let i = full * 8; i < count; i++)
        if ((out[(start + i) >> 3]! & (1 << ((start + i) & 7))) === 0) this.nullCount++;
    } else {
      for (let i = 0; i < count; i++) {
        const bit = start + i;
        if (rowValid(mask, offset + i)) out[bit >> 3]! |= 1 << (bit & 7);
        else {
          out[bit >> 3]! &= ~(1 << (bit & 7));
          this.nullCount++;
        }
      }
    }
    this.rows += count;
    this.bits.length = Math.ceil(this.rows / 8);
  }

  /** The bitmap (omitted when nothing is null) and its null count; starts over. */
  take(): { nullBitmap: Uint8Array | undefined; nullCount: number } {
    const nullCount = this.nullCount;
    const bitmap = this.bits.take();
    this.rows = 0;
    this.nullCount = 0;
    return { nullBitmap: nullCount > 0 ? bitmap : undefined, nullCount };
  }
}

export function vectorOf(chunk: DuckDBDataChunk, column: number): duckdb.Vector {
  return duckdb.data_chunk_get_vector(chunk.chunk, column);
}
