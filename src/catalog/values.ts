/**
 * Values on their way into the catalog: parsed JSON from `$SYS` replies, checked against the
 * type of the column they land in. Nothing here wraps, rounds or truncates silently: a value
 * that does not fit its column is refused with a reason, and the fold records the reason in
 * hx.epochs.errors and writes NULL, so one odd field never fails a whole epoch.
 */
import {
  DuckDBTimestampTZValue,
  DuckDBTypeId,
  listValue,
  type DuckDBType,
  type DuckDBValue,
} from "@duckdb/node-api";

export type Converted = { ok: true; value: DuckDBValue } | { ok: false; reason: string };

const INT32_MIN = -(2n ** 31n);
const INT32_MAX = 2n ** 31n - 1n;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

type Converter = (input: unknown, type: DuckDBType) => Converted;

/** An integer column: whole numbers (number or bigint) within [min, max]. */
function integer(min: bigint, max: bigint, out: (n: bigint) => DuckDBValue): Converter {
  return (input, type) => {
    let n: bigint;
    if (typeof input === "bigint") n = input;
    else if (typeof input === "number" && Number.isInteger(input)) n = BigInt(input);
    else return refuse(input, type);
    return n >= min && n <= max ? { ok: true, value: out(n) } : refuse(input, type);
  };
}

/** The column types the fold writes, by type id. */
const CONVERTERS: Partial<Record<DuckDBTypeId, Converter>> = {
  [DuckDBTypeId.BOOLEAN]: (input, type) =>
    typeof input === "boolean" ? { ok: true, value: input } : refuse(input, type),
  [DuckDBTypeId.INTEGER]: integer(INT32_MIN, INT32_MAX, Number),
  [DuckDBTypeId.BIGINT]: integer(INT64_MIN, INT64_MAX, (n) => n),
  [DuckDBTypeId.UBIGINT]: integer(0n, UINT64_MAX, (n) => n),
  [DuckDBTypeId.DOUBLE]: (input, type) =>
    typeof input === "number" || typeof input === "bigint"
      ? { ok: true, value: Number(input) }
      : refuse(input, type),
  [DuckDBTypeId.VARCHAR]: (input, type) =>
    typeof input === "string" ? { ok: true, value: input } : refuse(input, type),
  [DuckDBTypeId.TIMESTAMP_TZ]: timestampTZ,
  [DuckDBTypeId.LIST]: list,
};

/** Whether the fold knows how to write a column of this type (checked once, at open). */
export function isWritableType(type: DuckDBType): boolean {
  if (type.typeId === DuckDBTypeId.LIST) return isWritableType(type.valueType);
  return CONVERTERS[type.typeId] !== undefined;
}

/**
 * Converts a parsed JSON value (or a value the fold made) to a DuckDB value of `type`.
 * `undefined` and `null` are NULL. Integers may be numbers or bigints (parseJsonExact keeps
 * anything beyond 2^53 as bigint); they must be whole and within the column's range.
 * TIMESTAMPTZ takes an RFC 3339 string (nanoseconds are cut to microseconds, DuckDB's
 * precision) or a DuckDBTimestampTZValue; Go's zero time ("0001-01-01T00:00:00Z", which
 * NATS sends for "never") is NULL.
 */
export function convertValue(type: DuckDBType, input: unknown): Converted {
  if (input === undefined || input === null) return { ok: true, value: null };
  const convert = CONVERTERS[type.typeId];
  return convert
    ? convert(input, type)
    : { ok: false, reason: `the fold cannot write ${type.toString()} columns` };
}

function timestampTZ(input: unknown, type: DuckDBType): Converted {
  if (input instanceof DuckDBTimestampTZValue) return { ok: true, value: input };
  if (typeof input !== "string") return refuse(input, type);
  const micros = parseRfc3339Micros(input);
  if (micros === undefined) return refuse(input, type);
  return { ok: true, value: micros === GO_ZERO_TIME_MICROS ? null : new DuckDBTimestampTZValue(micros) };
}

function list(input: unknown, type: DuckDBType): Converted {
  if (!Array.isArray(input) || type.typeId !== DuckDBTypeId.LIST) return refuse(input, type);
  const items: DuckDBValue[] = [];
  for (const [i, item] of (input as unknown[]).entries()) {
    const converted = convertValue(type.valueType, item);
    if (!converted.ok) return { ok: false, reason: `item ${i} of a ${type.toString()}: ${converted.reason}` };
    items.push(converted.value);
  }
  return { ok: true, value: listValue(items) };
}

function refuse(input: unknown, type: DuckDBType): Converted {
  return { ok: false, reason: `${describe(input)} is not a ${type.toString()}` };
}

/** A short, safe rendering of an offending value for an error message. */
function describe(input: unknown): string {
  if (typeof input === "string") return JSON.stringify(input.length > 40 ? `${input.slice(0, 40)}…` : input);
  if (typeof input === "number" || typeof input === "bigint" || typeof input === "boolean") {
    return String(input);
  }
  return Array.isArray(input) ? "an array" : typeof input === "object" ? "an object" : typeof input;
}

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Microseconds since the Unix epoch of 0001-01-01T00:00:00Z, Go's zero time. */
export const GO_ZERO_TIME_MICROS = -62135596800000000n;

/**
 * RFC 3339 → microseconds since the Unix epoch, exactly (Date.parse keeps only
 * milliseconds; NATS sends nanoseconds). Undefined when the text is not RFC 3339 or names
 * an impossible date.
 */
export function parseRfc3339Micros(text: string): bigint | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac = "", , sign, oh = "0", om = "0"] = m;
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC maps years 0-99 to 1900-1999.
  date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  date.setUTCHours(Number(h), Number(mi), Number(s), 0);
  const valid =
    date.getUTCFullYear() === Number(y) &&
    date.getUTCMonth() === Number(mo) - 1 &&
    date.getUTCDate() === Number(d) &&
    date.getUTCHours() === Number(h) &&
    date.getUTCMinutes() === Number(mi) &&
    date.getUTCSeconds() === Number(s) &&
    Number(oh) < 24 &&
    Number(om) < 60;
  if (!valid) return undefined;
  const offsetMinutes = (sign === "-" ? -1 : 1) * (Number(oh) * 60 + Number(om));
  const subMicros = BigInt(frac.padEnd(6, "0").slice(0, 6));
  return (BigInt(date.getTime()) - BigInt(offsetMinutes) * 60_000n) * 1000n + subMicros;
}
