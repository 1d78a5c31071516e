/**
 * Streamed Arrow values rendered the way db.query renders DuckDB values (catalog/render.ts),
 * from the raw Arrow buffers (Arrow JS's own getters give timestamps in milliseconds), so a
 * streamed result can be compared with db.query's value for value.
 */
import { DataType, type Data, type RecordBatch } from "apache-arrow";
import { ArrowFieldMetadata } from "../../../src/protocol/index.ts";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export function renderBatches(batches: readonly RecordBatch[]): Record<string, Json>[] {
  const rows: Record<string, Json>[] = [];
  for (const batch of batches) {
    const fields = batch.schema.fields;
    const columns: Data[] = fields.map((_, c) => batch.getChildAt(c)!.data[0] as Data);
    for (let i = 0; i < batch.numRows; i++) {
      const row: Record<string, Json> = {};
      fields.forEach((field, c) => {
        row[field.name] = renderArrow(columns[c]!, i, field.metadata.get(ArrowFieldMetadata.Encoding));
      });
      rows.push(row);
    }
  }
  return rows;
}

function renderArrow(data: Data, i: number, encoding: string | undefined): Json {
  if (DataType.isNull(data.type)) return null;
  if (data.nullBitmap && data.nullCount > 0) {
    const bit = data.offset + i;
    if ((data.nullBitmap[bit >> 3]! & (1 << (bit & 7))) === 0) return null;
  }
  const at = data.offset + i;
  const type = data.type;
  if (DataType.isInt(type)) {
    const v = (data.values as ArrayLike<number | bigint>)[at]!;
    return typeof v === "bigint" ? integer(v) : v;
  }
  if (DataType.isFloat(type)) {
    const v = (data.values as Float64Array)[at]!;
    return Number.isFinite(v) ? v : String(v);
  }
  if (DataType.isBool(type)) return ((data.values as Uint8Array)[at >> 3]! & (1 << (at & 7))) !== 0;
  if (DataType.isDecimal(type)) {
    const w = data.values as Uint32Array;
    const raw = BigInt.asIntN(
      128,
      BigInt(w[4 * at]!) |
        (BigInt(w[4 * at + 1]!) << 32n) |
        (BigInt(w[4 * at + 2]!) << 64n) |
        (BigInt(w[4 * at + 3]!) << 96n),
    );
    const exact = decimalText(raw, type.scale);
    if (type.scale === 0) return integer(raw);
    const n = Number(exact);
    return n.toFixed(type.scale) === exact ? n : exact;
  }
  if (DataType.isTimestamp(type)) return rfc3339Micros((data.values as BigInt64Array)[at]!);
  if (DataType.isDate(type)) {
    return new Date((data.values as Int32Array)[at]! * 86_400_000).toISOString().slice(0, 10);
  }
  if (DataType.isUtf8(type) || DataType.isBinary(type)) {
    const offsets = data.valueOffsets as Int32Array;
    const bytes = (data.values as Uint8Array).subarray(offsets[at], offsets[at + 1]);
    if (DataType.isBinary(type)) return Buffer.from(bytes).toString("base64");
    const text = Buffer.from(bytes).toString("utf8");
    return encoding === "json" ? (JSON.parse(text) as Json) : text;
  }
  throw new Error(`no test rendering for type id ${type.typeId}`);
}

function integer(v: bigint): number | string {
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)
    ? Number(v)
    : v.toString();
}

export function decimalText(raw: bigint, scale: number): string {
  const negative = raw < 0n;
  const digits = (negative ? -raw : raw).toString().padStart(scale + 1, "0");
  const text = scale > 0 ? `${digits.slice(0, -scale)}.${digits.slice(-scale)}` : digits;
  return negative ? `-${text}` : text;
}

/** db.query's timestamp text: milliseconds always, microseconds when the value has them. */
export function rfc3339Micros(us: bigint): string {
  const ms = us >= 0n ? us / 1000n : -((-us + 999n) / 1000n);
  const sub = us - ms * 1000n;
  const iso = new Date(Number(ms)).toISOString();
  return sub === 0n ? iso : iso.replace("Z", `${sub.toString().padStart(3, "0")}Z`);
}
