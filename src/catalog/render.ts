/**
 * How db.query renders DuckDB values (the same rendering for JSON and CSV):
 *
 * - NULL → null.
 * - Integers → JSON numbers when within ±(2^53−1), otherwise decimal strings, per value
 *   (BIGINT, UBIGINT, HUGEINT, UHUGEINT, BIGNUM).
 * - FLOAT/DOUBLE → numbers; NaN and ±Infinity, which JSON lacks, → "NaN", "Infinity", "-Infinity".
 * - DECIMAL → a number when the nearest double rounds back to the same decimal at the
 *   column's scale (always so up to 15 significant digits), else DuckDB's decimal string.
 *   Either way a reader recovers the exact value.
 * - TIMESTAMP, TIMESTAMPTZ and the _S/_MS/_NS variants → RFC 3339 in UTC with a "Z":
 *   milliseconds always ("2026-11-22T11:02:14.000Z", the same text as an epoch on the
 *   wire), micro- or nanoseconds when the value has them. A TIMESTAMP without zone is read
 *   as UTC. ±infinity → "infinity" / "-infinity"; years outside 0000–9999, which RFC 3339
 *   lacks, in ISO 8601's expanded form ("+010000-01-01T00:00:00.000Z", "-000044-…").
 * - DATE → "YYYY-MM-DD", expanded past 0000–9999 as timestamps are; TIME, TIME_TZ, INTERVAL, UUID, BIT, ENUM → DuckDB's text.
 * - BLOB → base64.
 * - LIST, ARRAY → arrays; STRUCT → objects; MAP → an object keyed by the keys' text;
 *   UNION → the value of its active member; VARIANT → its value, rendered by its own type.
 */
import {
  DuckDBDateValue,
  DuckDBListValue,
  DuckDBStructValue,
  DuckDBTimestampTZValue,
  DuckDBTypeId,
  type DuckDBBlobValue,
  type DuckDBDecimalValue,
  type DuckDBMapValue,
  type DuckDBType,
  type DuckDBUnionValue,
  type DuckDBValue,
  type DuckDBVariantValue,
} from "@duckdb/node-api";
import { isoDate, isoTimestamp } from "../lib/index.ts";

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * "query": db.query's rules above. "stream": db.query.stream's, for the values it sends as
 * text (LIST, STRUCT, MAP… as JSON): the same, except that DECIMAL and HUGEINT/UHUGEINT are
 * always decimal strings, as its top-level columns are (spec: db.query.stream).
 */
export type RenderStyle = "query" | "stream";

type Renderer = (value: DuckDBValue, type: DuckDBType, style: RenderStyle) => JsonValue;

const asIs: Renderer = (value) => value as boolean | number | string;
const asInteger: Renderer = (value) => integer(value as bigint);
const asDouble: Renderer = (value) => double(value as number);
const asHugeint: Renderer = (value, _type, style) =>
  style === "stream" ? String(value) : integer(value as bigint);

/** Renderers by type id; any other type is written as DuckDB's text for it. */
const RENDERERS: Partial<Record<DuckDBTypeId, Renderer>> = {
  [DuckDBTypeId.BOOLEAN]: asIs,
  [DuckDBTypeId.TINYINT]: asIs,
  [DuckDBTypeId.SMALLINT]: asIs,
  [DuckDBTypeId.INTEGER]: asIs,
  [DuckDBTypeId.UTINYINT]: asIs,
  [DuckDBTypeId.USMALLINT]: asIs,
  [DuckDBTypeId.UINTEGER]: asIs,
  [DuckDBTypeId.VARCHAR]: asIs,
  [DuckDBTypeId.BIGINT]: asInteger,
  [DuckDBTypeId.UBIGINT]: asInteger,
  [DuckDBTypeId.HUGEINT]: asHugeint,
  [DuckDBTypeId.UHUGEINT]: asHugeint,
  [DuckDBTypeId.BIGNUM]: asInteger,
  [DuckDBTypeId.FLOAT]: asDouble,
  [DuckDBTypeId.DOUBLE]: asDouble,
  [DuckDBTypeId.DECIMAL]: (value, _type, style) =>
    style === "stream" ? (value as DuckDBDecimalValue).toString() : decimal(value as DuckDBDecimalValue),
  [DuckDBTypeId.TIMESTAMP]: (value) => timestamp((value as { micros: bigint }).micros * 1000n, 6, value),
  [DuckDBTypeId.TIMESTAMP_TZ]: (value) => timestamp((value as { micros: bigint }).micros * 1000n, 6, value),
  [DuckDBTypeId.TIMESTAMP_S]: (value) =>
    timestamp((value as { seconds: bigint }).seconds * 1_000_000_000n, 0, value),
  [DuckDBTypeId.TIMESTAMP_MS]: (value) =>
    timestamp((value as { millis: bigint }).millis * 1_000_000n, 3, value),
  [DuckDBTypeId.TIMESTAMP_NS]: (value) => timestamp((value as { nanos: bigint }).nanos, 9, value),
  [DuckDBTypeId.DATE]: (value) => date(value as DuckDBDateValue),
  [DuckDBTypeId.BLOB]: (value) => Buffer.from((value as DuckDBBlobValue).bytes).toString("base64"),
  [DuckDBTypeId.LIST]: items,
  [DuckDBTypeId.ARRAY]: items,
  [DuckDBTypeId.STRUCT]: (value, type, style) => {
    if (type.typeId !== DuckDBTypeId.STRUCT) return text(value);
    const entries = (value as DuckDBStructValue).entries;
    return Object.fromEntries(
      type.entryNames.map((name, i) => [
        name,
        renderValue(entries[name] ?? null, type.entryTypes[i]!, style),
      ]),
    );
  },
  [DuckDBTypeId.MAP]: (value, type, style) => {
    if (type.typeId !== DuckDBTypeId.MAP) return text(value);
    // fromEntries defines each key as an own property: an assignment would take the key
    // `__proto__` for the object's prototype and drop the entry.
    return Object.fromEntries(
      (value as DuckDBMapValue).entries.map((entry) => {
        const key = renderValue(entry.key, type.keyType, style);
        return [
          typeof key === "string" ? key : JSON.stringify(key),
          renderValue(entry.value, type.valueType, style),
        ];
      }),
    );
  },
  [DuckDBTypeId.UNION]: (value, type, style) => {
    const union = value as DuckDBUnionValue;
    if (type.typeId !== DuckDBTypeId.UNION) return untyped(union.value);
    const member = type.memberTypes[type.tagMemberIndexes[union.tag] ?? -1];
    return member ? renderValue(union.value, member, style) : untyped(union.value);
  },
  [DuckDBTypeId.VARIANT]: (value, _type, style) => {
    const variant = value as DuckDBVariantValue;
    return variant.type ? renderValue(variant.value, variant.type, style) : untyped(variant.value);
  },
};

export function renderValue(value: DuckDBValue, type: DuckDBType, style: RenderStyle = "query"): JsonValue {
  if (value === null) return null;
  const render = RENDERERS[type.typeId];
  return render ? render(value, type, style) : text(value);
}

function items(value: DuckDBValue, type: DuckDBType, style: RenderStyle): JsonValue {
  const list = (value as { items: readonly DuckDBValue[] }).items;
  if (type.typeId !== DuckDBTypeId.LIST && type.typeId !== DuckDBTypeId.ARRAY) return list.map(untyped);
  return list.map((item) => renderValue(item, type.valueType, style));
}

/** Text of a value object (TIME, INTERVAL, UUID, BIT, …): all define toString. */
function text(value: DuckDBValue): string {
  if (value === null) return "";
  return typeof value === "object" ? value.toString() : String(value);
}

function integer(value: bigint): number | string {
  return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
    ? Number(value)
    : value.toString();
}

function double(value: number): number | string {
  return Number.isFinite(value) ? value : String(value);
}

function decimal(value: DuckDBDecimalValue): number | string {
  const exact = value.toString();
  const n = Number(exact);
  // toFixed gives the double's exact decimal expansion rounded to `scale` places, or
  // exponent notation from 1e21 on (never equal to DuckDB's text, so a string then).
  return n.toFixed(value.scale) === exact ? n : exact;
}

const NANOS_PER_MS = 1_000_000n;

/**
 * RFC 3339 from nanoseconds since the Unix epoch. `digits` is the type's precision: a
 * fraction finer than milliseconds is written only when the value has one.
 */
function timestamp(nanos: bigint, digits: number, value: DuckDBValue): string {
  const infinite = infinity(value);
  if (infinite) return infinite;
  const ms = nanos >= 0n ? nanos / NANOS_PER_MS : -((-nanos + NANOS_PER_MS - 1n) / NANOS_PER_MS);
  const date = new Date(Number(ms));
  const year = date.getUTCFullYear();
  // Past what a Date holds, or with no RFC 3339 form: ISO 8601's expanded years, as the CLI has them.
  if (Number.isNaN(date.getTime()) || year < 0 || year > 9999) return isoTimestamp(nanos, digits);
  const subMs = (nanos - ms * NANOS_PER_MS).toString().padStart(6, "0");
  const extra = digits <= 3 || subMs === "000000" ? "" : subMs.slice(0, digits - 3).replace(/0{3}$/, "");
  return date.toISOString().replace("Z", `${extra}Z`);
}

/**
 * "infinity" or "-infinity" for DuckDB's infinite timestamps, which are the extreme int64
 * values in every unit; the sign is the raw value's (the library's text for an _S, _MS or _NS
 * one is a BC date with no minus).
 */
function infinity(value: DuckDBValue): "infinity" | "-infinity" | undefined {
  const v = value as { micros?: bigint; nanos?: bigint; seconds?: bigint; millis?: bigint };
  const raw = v.micros ?? v.nanos ?? v.seconds ?? v.millis;
  if (raw === DuckDBTimestampTZValue.PosInf.micros) return "infinity";
  if (raw === DuckDBTimestampTZValue.NegInf.micros) return "-infinity";
  return undefined;
}

function date(value: DuckDBDateValue): string {
  if (value.days === DuckDBDateValue.PosInf.days) return "infinity";
  if (value.days === DuckDBDateValue.NegInf.days) return "-infinity";
  return isoDate(value.days);
}

/** A value whose type is not known (inside a VARIANT without one, or an unknown UNION tag). */
function untyped(value: DuckDBValue): JsonValue {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") return double(value);
  if (typeof value === "bigint") return integer(value);
  if (value instanceof DuckDBListValue) return value.items.map(untyped);
  if (value instanceof DuckDBStructValue) {
    return Object.fromEntries(Object.entries(value.entries).map(([k, v]) => [k, untyped(v)]));
  }
  return text(value);
}
