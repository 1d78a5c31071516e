/**
 * Variable-width columns for arrow-columns.ts: VARCHAR and BLOB copied out of DuckDB's
 * string vectors, and the text fallback for types without an Arrow counterpart.
 */
import duckdb from "@duckdb/node-bindings";
import { DuckDBTypeId, type DuckDBDataChunk, type DuckDBType } from "@duckdb/node-api";
import { Utf8, makeData, type Binary, type Data } from "apache-arrow";
import {
  Bytes,
  INITIAL_CAPACITY,
  rowValid,
  Validity,
  vectorOf,
  type ColumnBuilder,
} from "./arrow-buffers.ts";
import { renderValue } from "./render.ts";

/**
 * Longest gap between two long strings read in one call. A run whose gaps are all shorter
 * than a memory page only touches pages that hold string bytes, so reading it is safe.
 */
const MAX_GAP = 1024;
const TWO_32 = 2 ** 32;

/**
 * VARCHAR and BLOB: duckdb_string_t is 16 bytes, a length and either the bytes inline
 * (up to 12) or a pointer. Reading each pointed-to string costs one native call (~1.6 µs,
 * the bottleneck measured in stack-notes §3), so the pointers are sorted and neighbouring
 * strings are fetched in one call per contiguous run of DuckDB's string heap.
 */
export class StringBuilder implements ColumnBuilder {
  private readonly values = new Bytes();
  private offsets = new Int32Array(INITIAL_CAPACITY + 1);
  private readonly validity = new Validity();
  private rows = 0;
  readonly type: Utf8 | Binary;
  constructor(type: Utf8 | Binary) {
    this.type = type;
  }

  append(chunk: DuckDBDataChunk, column: number, offset: number, count: number): void {
    const vector = vectorOf(chunk, column);
    const data = duckdb.vector_get_data(vector, (offset + count) * 16);
    const mask = Validity.of(vector, offset + count);
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    if (this.offsets.length < this.rows + count + 1) {
      const next = new Int32Array(Math.max(this.offsets.length * 2, this.rows + count + 1));
      next.set(this.offsets.subarray(0, this.rows + 1));
      this.offsets = next;
    }
    // First pass: lengths, and where the long strings are.
    const lengths = new Int32Array(count);
    const longRows: number[] = [];
    const pointers: number[] = [];
    let total = 0;
    let sorted = true;
    for (let i = 0; i < count; i++) {
      const row = offset + i;
      if (!rowValid(mask, row)) continue;
      const at = row * 16;
      const len = view.getUint32(at, true);
      lengths[i] = len;
      total += len;
      if (len > 12) {
        const pointer = view.getUint32(at + 8, true) + view.getUint32(at + 12, true) * TWO_32;
        if (pointers.length > 0 && pointer < pointers[pointers.length - 1]!) sorted = false;
        longRows.push(i);
        pointers.push(pointer);
      }
    }
    const runs = this.readRuns(data, offset, lengths, longRows, pointers, sorted);
    // Second pass: copy the bytes in row order.
    this.values.reserve(total);
    const out = this.values.buf;
    let pos = this.values.length;
    let long = 0;
    const offsets = this.offsets;
    for (let i = 0; i < count; i++) {
      offsets[this.rows + i] = pos;
      const len = lengths[i]!;
      if (len === 0) continue;
      if (len <= 12) {
        const at = (offset + i) * 16 + 4;
        for (let b = 0; b < len; b++) out[pos + b] = data[at + b]!;
      } else {
        const { bytes, start } = runs[long]!;
        const from = pointers[long]! - start;
        out.set(bytes.subarray(from, from + len), pos);
        long++;
      }
      pos += len;
    }
    offsets[this.rows + count] = pos;
    this.values.length = pos;
    this.rows += count;
    this.validity.append(mask, offset, count);
  }

  /**
   * Reads the long strings' bytes in as few native calls as possible; answers, per long
   * string in row order, the run holding it and the run's start address.
   */
  private readRuns(
    data: Uint8Array,
    offset: number,
    lengths: Int32Array,
    longRows: readonly number[],
    pointers: readonly number[],
    sorted: boolean,
  ): { bytes: Uint8Array; start: number }[] {
    const n = longRows.length;
    const order = Array.from({ length: n }, (_, k) => k);
    if (!sorted) order.sort((a, b) => pointers[a]! - pointers[b]!);
    const out = new Array<{ bytes: Uint8Array; start: number }>(n);
    let k = 0;
    while (k < n) {
      const first = order[k]!;
      const start = pointers[first]!;
      let end = start + lengths[longRows[first]!]!;
      let last = k + 1;
      while (last < n) {
        const p = pointers[order[last]!]!;
        if (p - end > MAX_GAP) break;
        end = Math.max(end, p + lengths[longRows[order[last]!]!]!);
        last++;
      }
      // get_data_from_pointer reads the pointer stored in the first string's duckdb_string_t.
      const at = data.byteOffset + (offset + longRows[first]!) * 16 + 8;
      const run = { bytes: duckdb.get_data_from_pointer(data.buffer as ArrayBuffer, at, end - start), start };
      for (let j = k; j < last; j++) out[order[j]!] = run;
      k = last;
    }
    return out;
  }

  finish(): Data {
    const length = this.rows;
    // Like the other buffers, valid until the next append (ColumnBuilder.finish).
    const valueOffsets = this.offsets.subarray(0, length + 1);
    this.rows = 0;
    const props = { length, valueOffsets, data: this.values.take(), ...this.validity.take() };
    return this.type instanceof Utf8
      ? makeData({ type: this.type, ...props })
      : makeData({ type: this.type, ...props });
  }
}

const encoder = new TextEncoder();

/**
 * Any other type, as text: the value rendered by db.query's rules in their stream style
 * (DECIMAL and HUGEINT as decimal strings, as at top level), nested values as JSON.
 */
export class TextBuilder implements ColumnBuilder {
  readonly type = new Utf8();
  private readonly values = new Bytes();
  private offsets: number[] = [0];
  private readonly validity = new Validity();
  private readonly nested: boolean;
  private readonly duckType: DuckDBType;
  readonly encoding: "json" | "text";

  constructor(duckType: DuckDBType) {
    this.duckType = duckType;
    const id = duckType.typeId;
    this.nested = [
      DuckDBTypeId.LIST,
      DuckDBTypeId.ARRAY,
      DuckDBTypeId.STRUCT,
      DuckDBTypeId.MAP,
      DuckDBTypeId.UNION,
      DuckDBTypeId.VARIANT,
    ].includes(id);
    this.encoding = this.nested ? "json" : "text";
  }

  append(chunk: DuckDBDataChunk, column: number, offset: number, count: number): void {
    const vector = chunk.getColumnVector(column);
    for (let i = 0; i < count; i++) {
      const value = vector.getItem(offset + i);
      if (value !== null) {
        const rendered = renderValue(value, this.duckType, "stream");
        const text = typeof rendered === "string" && !this.nested ? rendered : JSON.stringify(rendered);
        this.values.push(encoder.encode(text));
      }
      this.offsets.push(this.values.length);
    }
    this.validity.append(Validity.of(vectorOf(chunk, column), offset + count), offset, count);
  }

  finish(): Data {
    const valueOffsets = Int32Array.from(this.offsets);
    this.offsets = [0];
    return makeData({
      type: this.type,
      length: valueOffsets.length - 1,
      valueOffsets,
      data: this.values.take(),
      ...this.validity.take(),
    });
  }
}
