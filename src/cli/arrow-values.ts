/**
 * Values of an Arrow record batch (from db.query.stream) as plain values for CSV, JSON and
 * table output, by the spec's rendering rules for db.query.stream:
 *
 * - NULL → null (an empty CSV field, JSON null).
 * - Timestamps (any unit, with or without zone) → RFC 3339 in UTC with "Z": milliseconds
 *   always, micro- or nanoseconds when the value has them, read from the raw integers so no
 *   digit is lost; ±infinity → "infinity" / "-infinity".
 * - DECIMAL and HUGEINT (both Arrow Decimal) → canonical decimal strings with the column's
 *   scale ("12.340", "-0.500", "170141183460469231731687303715884105727").
 * - 64-bit integers → numbers within ±(2^53−1), else decimal strings, as db.query does,
 *   so no reader ever sees a rounded bigint.
 * - BLOB (Binary) → base64. Floats → numbers; NaN and ±Infinity → strings (JSON has none).
 * - DATE → "YYYY-MM-DD", ±infinity → "infinity" / "-infinity"; TIME → "HH:MM:SS[.fraction]"; lists → arrays; structs and maps →
 *   objects, whether Arrow types or JSON text the server marked `natsmon.encoding: json`;
 *   dictionary-encoded values (ENUM) → their dictionary entry.
 *
 * Readers work on each column's `Data` (values, offsets, validity) rather than
 * `Vector.get`, which turns timestamps into fractional milliseconds and decimals into raw words.
 */
import {
  DataType,
  DateUnit,
  Precision,
  TimeUnit,
  makeVector,
  type Data,
  type Field,
  type RecordBatch,
} from "apache-arrow";
import { isoDate, isoTimestamp } from "../lib/index.ts";
import { ArrowFieldMetadata } from "../protocol/index.ts";

export type Cell = null | boolean | number | string | Cell[] | { [key: string]: Cell };

/** Reads row `i` (0-based, relative to the Data's own offset) of one column. */
export type CellReader = (i: number) => Cell;

/**
 * One reader per column of the batch, in column order. A column the server sends as JSON
 * text (field metadata `natsmon.encoding: json`: LIST, STRUCT, MAP, …) reads as the value
 * itself, so JSON output nests it and CSV writes its JSON text.
 */
export function batchReaders(batch: RecordBatch): CellReader[] {
  return batch.data.children.map((child, i) => {
    const read = cellReader(child);
    if (batch.schema.fields[i]?.metadata.get(ArrowFieldMetadata.Encoding) !== "json") return read;
    return (row) => {
      const value = read(row);
      return typeof value === "string" ? (JSON.parse(value) as Cell) : value;
    };
  });
}

/** DuckDB types the server sends as text that are numbers all the same. */
const NUMERIC_TEXT_TYPES: ReadonlySet<string> = new Set(["UHUGEINT", "BIGNUM", "VARINT"]);

/**
 * Whether a column holds numbers, from its type rather than its values: DECIMAL, HUGEINT
 * and BIGINT past 2^53 read as strings, and a table still aligns them as numbers.
 */
export function isNumericField(field: Field<DataType>): boolean {
  const { type } = field;
  if (DataType.isInt(type) || DataType.isFloat(type) || DataType.isDecimal(type)) return true;
  const duckdbType = field.metadata.get(ArrowFieldMetadata.DuckDBType);
  return duckdbType !== undefined && NUMERIC_TEXT_TYPES.has(duckdbType);
}

/** Every row of a batch as an array of cells (small batches and tests; writers use readers). */
export function batchRows(batch: RecordBatch): Cell[][] {
  const readers = batchReaders(batch);
  const rows: Cell[][] = [];
  for (let r = 0; r < batch.numRows; r++) rows.push(readers.map((read) => read(r)));
  return rows;
}

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/** A reader for one column; nulls are checked against the validity bitmap first. */
export function cellReader(data: Data): CellReader {
  const read = valueReader(data);
  const bitmap = data.nullBitmap;
  if (data.nullCount === 0 || !bitmap || bitmap.length === 0) return read;
  // The validity bitmap is never sliced: its bits count from the Data's offset.
  const offset = data.offset;
  return (i) => {
    const bit = offset + i;
    return (bitmap[bit >> 3]! & (1 << (bit & 7))) === 0 ? null : read(i);
  };
}

/**
 * Arrow JS slices value and offset buffers to the Data's window, so `values[i]` is row i;
 * only bit-packed buffers (validity, booleans) count from `data.offset`. Struct and
 * fixed-size-list children are sliced with their parent; list and map children are not
 * (their offsets point into the whole child).
 */
function valueReader(data: Data): CellReader {
  const type = data.type;
  if (DataType.isNull(type)) return () => null;
  if (DataType.isBool(type)) {
    const offset = data.offset;
    const bits = data.values as Uint8Array;
    return (i) => {
      const bit = offset + i;
      return (bits[bit >> 3]! & (1 << (bit & 7))) !== 0;
    };
  }
  if (DataType.isInt(type)) {
    if (type.bitWidth === 64) {
      const values = data.values as BigInt64Array | BigUint64Array;
      return (i) => integer(values[i]!);
    }
    const values = data.values as Int32Array;
    return (i) => values[i]!;
  }
  if (DataType.isFloat(type)) {
    // Half floats are stored as raw 16-bit words; Arrow's accessor decodes them.
    const values: ArrayLike<number> =
      type.precision === Precision.HALF
        ? (makeVector(data).toArray() as Float32Array)
        : (data.values as Float64Array);
    return (i) => double(values[i]!);
  }
  if (DataType.isUtf8(type) || DataType.isLargeUtf8(type)) return utf8Reader(data);
  if (DataType.isBinary(type) || DataType.isLargeBinary(type)) {
    const bytes = variableBytes(data);
    return (i) => base64(bytes(i));
  }
  if (DataType.isFixedSizeBinary(type)) {
    const values = data.values as Uint8Array;
    const width = type.byteWidth;
    return (i) => base64(values.subarray(i * width, (i + 1) * width));
  }
  if (DataType.isDecimal(type)) return decimalReader(data.values as Uint32Array, type);
  if (DataType.isTimestamp(type)) {
    const values = data.values as BigInt64Array;
    const nanosPer = NANOS_PER_UNIT[type.unit];
    // Microseconds within ±2^53 (years 1685–2255) take the Number path; the rest BigInt.
    const microsPer = type.unit === TimeUnit.NANOSECOND ? 0 : Number(nanosPer / 1000n);
    return (i) => {
      const raw = values[i]!;
      const micros = Number(raw) * microsPer;
      return Number.isSafeInteger(micros) && microsPer > 0
        ? timestampMicros(micros)
        : timestamp(raw, nanosPer);
    };
  }
  if (DataType.isDate(type)) {
    // DateDay holds days as int32; DateMillisecond holds milliseconds as int64.
    if (type.unit === DateUnit.DAY) {
      const values = data.values as Int32Array;
      return (i) => dayText(values[i]!);
    }
    const values = data.values as BigInt64Array;
    return (i) => dateText(Number(values[i]!));
  }
  if (DataType.isTime(type)) {
    const values = data.values as Int32Array | BigInt64Array;
    const nanosPer = NANOS_PER_UNIT[type.unit];
    return (i) => timeText(BigInt(values[i]!) * nanosPer);
  }
  if (DataType.isList(type) || DataType.isLargeList(type)) {
    const offsets = data.valueOffsets as Int32Array | BigInt64Array;
    const child = cellReader(data.children[0]!);
    return (i) => {
      const out: Cell[] = [];
      for (let k = Number(offsets[i]!); k < Number(offsets[i + 1]!); k++) out.push(child(k));
      return out;
    };
  }
  if (DataType.isFixedSizeList(type)) {
    const size = type.listSize;
    const child = cellReader(data.children[0]!);
    return (i) => Array.from({ length: size }, (_, k) => child(i * size + k));
  }
  if (DataType.isStruct(type)) {
    const names = type.children.map((f) => f.name);
    const children = data.children.map((c) => cellReader(c));
    return (i) => Object.fromEntries(names.map((name, k) => [name, children[k]!(i)]));
  }
  if (DataType.isMap(type)) {
    // A map is a list of {key, value} structs.
    const offsets = data.valueOffsets as Int32Array;
    const entries = data.children[0]!;
    const keys = cellReader(entries.children[0]!);
    const values = cellReader(entries.children[1]!);
    return (i) => {
      const out: Record<string, Cell> = {};
      for (let k = offsets[i]!; k < offsets[i + 1]!; k++) {
        const key = keys(k);
        out[typeof key === "string" ? key : JSON.stringify(key)] = values(k);
      }
      return out;
    };
  }
  if (DataType.isDictionary(type) && data.dictionary) {
    const dictionary = data.dictionary.data;
    const indices = data.values as Int32Array | BigInt64Array;
    const readers = dictionary.map((d: Data) => cellReader(d));
    const starts = [0];
    for (const d of dictionary) starts.push(starts.at(-1)! + d.length);
    return (i) => {
      const index = Number(indices[i]!);
      let chunk = 0;
      while (index >= starts[chunk + 1]!) chunk++;
      return readers[chunk]!(index - starts[chunk]!);
    };
  }
  // Intervals, durations, unions and views: Arrow's own accessor, as text.
  const vector = makeVector(data);
  return (i) => text(vector.get(i));
}

function text(value: unknown): Cell {
  if (value === null || value === undefined) return null;
  if (typeof value === "bigint") return integer(value);
  if (typeof value === "number" || typeof value === "string" || typeof value === "boolean") return value;
  return JSON.stringify(value, (_, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
}

/** The bytes of a variable-width value (Utf8, Binary and their Large forms). */
function variableBytes(data: Data): (i: number) => Uint8Array {
  const offsets = data.valueOffsets as Int32Array | BigInt64Array;
  const values = data.values as Uint8Array;
  if (offsets instanceof Int32Array) return (i) => values.subarray(offsets[i], offsets[i + 1]);
  return (i) => values.subarray(Number(offsets[i]!), Number(offsets[i + 1]!));
}

function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

export function integer(value: bigint): number | string {
  // A bigint beyond ±(2^53−1) converts to a Number that is not a safe integer.
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : value.toString();
}

/**
 * UTF-8 strings. A batch whose bytes are all ASCII (the usual case: names, ids, subjects)
 * is decoded once and sliced by offsets, which costs a fraction of decoding each value.
 */
function utf8Reader(data: Data): CellReader {
  const bytes = variableBytes(data);
  const values = data.values as Uint8Array;
  const offsets = data.valueOffsets as Int32Array | BigInt64Array;
  if (offsets instanceof Int32Array && data.length > 0) {
    const start = offsets[0]!;
    const end = offsets[data.length]!;
    const window = values.subarray(start, end);
    if (isAscii(window)) {
      const text = Buffer.from(window.buffer, window.byteOffset, window.byteLength).toString("latin1");
      return (i) => text.slice(offsets[i]! - start, offsets[i + 1]! - start);
    }
  }
  const decoder = new TextDecoder();
  return (i) => decoder.decode(bytes(i));
}

function isAscii(bytes: Uint8Array): boolean {
  // Four bytes at a time where the alignment allows.
  let i = 0;
  if (bytes.byteOffset % 4 === 0) {
    const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >> 2);
    for (let w = 0; w < words.length; w++) if ((words[w]! & 0x80808080) !== 0) return false;
    i = words.length << 2;
  }
  for (; i < bytes.length; i++) if (bytes[i]! >= 0x80) return false;
  return true;
}

function double(value: number): number | string {
  return Number.isFinite(value) ? value : String(value);
}

/** DECIMAL(p, s) (and HUGEINT as DECIMAL(38, 0)): little-endian two's complement words. */
function decimalReader(words: Uint32Array, type: { scale: number; bitWidth: number }): CellReader {
  const stride = type.bitWidth / 32;
  const bits = BigInt(type.bitWidth);
  const sign = 1n << (bits - 1n);
  const slow = (start: number) => {
    let unscaled = 0n;
    for (let w = stride - 1; w >= 0; w--) unscaled = (unscaled << 32n) | BigInt(words[start + w]!);
    if (unscaled >= sign) unscaled -= 1n << bits;
    return decimalText(unscaled, type.scale);
  };
  if (stride < 2) return (i) => decimalText(BigInt(words[i]! | 0), type.scale);
  return (i) => {
    const start = i * stride;
    // Most values fit 53 bits: the words above the second are only sign extension, and the
    // second holds at most 21 more bits. Those are read as a Number, far faster than BigInt.
    const high = words[start + 1]!;
    let extension = 0;
    for (let w = 2; w < stride; w++)
      extension |= words[start + w]! === (high < 0x80000000 ? 0 : 0xffffffff) ? 0 : 1;
    if (extension === 0 && (high < 0x200000 || high >= 0xffe00000)) {
      const top = high < 0x80000000 ? high : high - 0x100000000;
      return decimalNumberText(top * 0x100000000 + words[start]!, type.scale);
    }
    return slow(start);
  };
}

function decimalNumberText(unscaled: number, scale: number): string {
  if (scale <= 0) return String(unscaled);
  const negative = unscaled < 0;
  const digits = String(negative ? -unscaled : unscaled).padStart(scale + 1, "0");
  const text = `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return negative ? `-${text}` : text;
}

/** The canonical text of an unscaled decimal: every fractional digit of the scale kept. */
export function decimalText(unscaled: bigint, scale: number): string {
  if (scale <= 0) return unscaled.toString();
  const negative = unscaled < 0n;
  const digits = (negative ? -unscaled : unscaled).toString().padStart(scale + 1, "0");
  const text = `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return negative ? `-${text}` : text;
}

const NANOS_PER_UNIT: Record<TimeUnit, bigint> = {
  [TimeUnit.SECOND]: 1_000_000_000n,
  [TimeUnit.MILLISECOND]: 1_000_000n,
  [TimeUnit.MICROSECOND]: 1_000n,
  [TimeUnit.NANOSECOND]: 1n,
};
const NANOS_PER_MS = 1_000_000n;

/**
 * RFC 3339 in UTC from a raw timestamp: milliseconds always (the same text as an epoch on
 * the wire), then as many more digits as the value needs (3 or 6). DuckDB keeps ±infinity
 * as the extreme int64 values; years outside 0000–9999 have no RFC 3339 form.
 */
export function timestamp(raw: bigint, nanosPerUnit: bigint): string {
  if (raw === INT64_MAX) return "infinity";
  if (raw === INT64_MIN || raw === INT64_MIN + 1n) return "-infinity";
  const nanos = raw * nanosPerUnit;
  const ms = nanos >= 0n ? nanos / NANOS_PER_MS : -((-nanos + NANOS_PER_MS - 1n) / NANOS_PER_MS);
  const date = new Date(Number(ms));
  // Years past 9999 come out in ISO 8601's expanded form (+010000-…), the closest RFC 3339
  // allows; beyond the ±275,760 years a Date holds, the calendar is worked out in full.
  if (Number.isNaN(date.getTime())) return isoTimestamp(nanos);
  const subMs = (nanos - ms * NANOS_PER_MS).toString().padStart(6, "0");
  const extra = subMs === "000000" ? "" : subMs.replace(/000$/, "");
  return date.toISOString().replace("Z", `${extra}Z`);
}

const MS_PER_DAY = 86_400_000;
/** The date part of the last day rendered: rows of one result mostly share a few days. */
let cachedDay = Number.NaN;
let cachedDate = "";

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/** The Number form of `timestamp` for microseconds that are a safe integer. */
function timestampMicros(micros: number): string {
  const ms = Math.floor(micros / 1000);
  const sub = micros - ms * 1000;
  const day = Math.floor(ms / MS_PER_DAY);
  if (day !== cachedDay) {
    cachedDay = day;
    cachedDate = new Date(day * MS_PER_DAY).toISOString().slice(0, 11);
  }
  let rest = ms - day * MS_PER_DAY;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const sec = Math.floor(rest / 1000);
  const milli = rest - sec * 1000;
  return `${cachedDate}${pad2(h)}:${pad2(m)}:${pad2(sec)}.${pad3(milli)}${sub === 0 ? "" : pad3(sub)}Z`;
}

/** DuckDB keeps a DATE's ±infinity as ±(2^31 − 1) days. */
const INFINITE_DAYS = 2_147_483_647;

function dayText(days: number): string {
  if (days === INFINITE_DAYS) return "infinity";
  if (days === -INFINITE_DAYS) return "-infinity";
  return dateText(days * 86_400_000);
}

function dateText(ms: number): string {
  const date = new Date(ms);
  if (Number.isNaN(date.getTime())) return isoDate(Math.floor(ms / 86_400_000));
  const iso = date.toISOString();
  return iso.slice(0, iso.indexOf("T"));
}

function timeText(nanos: bigint): string {
  const seconds = nanos / 1_000_000_000n;
  const hh = (seconds / 3600n).toString().padStart(2, "0");
  const mm = ((seconds / 60n) % 60n).toString().padStart(2, "0");
  const ss = (seconds % 60n).toString().padStart(2, "0");
  const fraction = (nanos % 1_000_000_000n).toString().padStart(9, "0").replace(/0+$/, "");
  return `${hh}:${mm}:${ss}${fraction ? `.${fraction}` : ""}`;
}
