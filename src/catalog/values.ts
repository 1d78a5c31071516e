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

/** What a fast converter returns for a value that does not fit its column. */
export const REFUSED: unique symbol = Symbol("refused");

/**
 * Converts one value that is neither undefined nor null (those are always NULL) to a DuckDB
 * value of the converter's column type, or REFUSED. The fold calls one per value, hundreds
 * of thousands of times an epoch, so it allocates nothing it does not return.
 */
export type FastConverter = (input: unknown) => DuckDBValue | typeof REFUSED;

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

const int32: FastConverter = (input) => {
  if (typeof input === "number") {
    return Number.isInteger(input) && input >= INT32_MIN && input <= INT32_MAX ? input : REFUSED;
  }
  if (typeof input === "bigint") {
    return input >= BigInt(INT32_MIN) && input <= BigInt(INT32_MAX) ? Number(input) : REFUSED;
  }
  return REFUSED;
};

/** A 64-bit integer column: a safe-integer number always fits BIGINT, so only bigints are range-checked. */
function int64(min: bigint, max: bigint): FastConverter {
  const unsigned = min === 0n;
  return (input) => {
    if (typeof input === "number") {
      if (!Number.isSafeInteger(input)) {
        if (!Number.isInteger(input)) return REFUSED;
        const n = BigInt(input);
        return n >= min && n <= max ? n : REFUSED;
      }
      return unsigned && input < 0 ? REFUSED : BigInt(input);
    }
    if (typeof input === "bigint") return input >= min && input <= max ? input : REFUSED;
    return REFUSED;
  };
}

/** Parsed timestamps by their text: NATS repeats the same ones epoch after epoch. */
const timestamps = new Map<string, DuckDBTimestampTZValue | null | typeof REFUSED>();
const TIMESTAMP_CACHE_SIZE = 200_000;

const timestampTZ: FastConverter = (input) => {
  if (input instanceof DuckDBTimestampTZValue) return input;
  if (typeof input !== "string") return REFUSED;
  let value = timestamps.get(input);
  if (value === undefined) {
    const micros = parseRfc3339Micros(input);
    value =
      micros === undefined
        ? REFUSED
        : micros === GO_ZERO_TIME_MICROS
          ? null
          : new DuckDBTimestampTZValue(micros);
    if (timestamps.size >= TIMESTAMP_CACHE_SIZE) timestamps.clear();
    timestamps.set(input, value);
  }
  return value;
};

/** The column types the fold writes, by type id (LIST is built from its item type). */
const SCALARS: Partial<Record<DuckDBTypeId, FastConverter>> = {
  [DuckDBTypeId.BOOLEAN]: (input) => (typeof input === "boolean" ? input : REFUSED),
  [DuckDBTypeId.INTEGER]: int32,
  [DuckDBTypeId.BIGINT]: int64(INT64_MIN, INT64_MAX),
  [DuckDBTypeId.UBIGINT]: int64(0n, UINT64_MAX),
  [DuckDBTypeId.DOUBLE]: (input) =>
    typeof input === "number" ? input : typeof input === "bigint" ? Number(input) : REFUSED,
  [DuckDBTypeId.VARCHAR]: (input) => (typeof input === "string" ? input : REFUSED),
  [DuckDBTypeId.TIMESTAMP_TZ]: timestampTZ,
};

const converters = new WeakMap<DuckDBType, FastConverter | null>();

/** The converter for a column type; undefined when the fold cannot write that type. */
export function converterFor(type: DuckDBType): FastConverter | undefined {
  let found = converters.get(type);
  if (found === undefined) {
    found = makeConverter(type) ?? null;
    converters.set(type, found);
  }
  return found ?? undefined;
}

function makeConverter(type: DuckDBType): FastConverter | undefined {
  if (type.typeId !== DuckDBTypeId.LIST) return SCALARS[type.typeId];
  const item = converterFor(type.valueType);
  if (!item) return undefined;
  return (input) => {
    if (!Array.isArray(input)) return REFUSED;
    const items: DuckDBValue[] = new Array<DuckDBValue>(input.length);
    for (let i = 0; i < input.length; i++) {
      const v: unknown = input[i];
      const converted = v === undefined || v === null ? null : item(v);
      if (converted === REFUSED) return REFUSED;
      items[i] = converted;
    }
    return listValue(items);
  };
}

/** Whether the fold knows how to write a column of this type (checked once, at open). */
export function isWritableType(type: DuckDBType): boolean {
  return converterFor(type) !== undefined;
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
  const convert = converterFor(type);
  if (!convert) return { ok: false, reason: `the fold cannot write ${type.toString()} columns` };
  const value = convert(input);
  return value === REFUSED ? { ok: false, reason: refusal(type, input) } : { ok: true, value };
}

/** Why `input` does not fit a column of `type` (only computed for a refused value). */
export function refusal(type: DuckDBType, input: unknown): string {
  if (type.typeId === DuckDBTypeId.LIST && Array.isArray(input)) {
    const items = input as unknown[];
    for (let i = 0; i < items.length; i++) {
      const converted = convertValue(type.valueType, items[i]);
      if (!converted.ok) return `item ${i} of a ${type.toString()}: ${converted.reason}`;
    }
  }
  return `${describe(input)} is not a ${type.toString()}`;
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
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Microseconds since the Unix epoch of 0001-01-01T00:00:00Z, Go's zero time. */
export const GO_ZERO_TIME_MICROS = -62135596800000000n;

/**
 * RFC 3339 → microseconds since the Unix epoch, exactly (Date.parse keeps only
 * milliseconds; NATS sends nanoseconds); digits past the microsecond, as many as RFC 3339
 * allows, are cut, or with `round` "up" count as one more microsecond when any is not zero
 * (a window's start, which cutting would move earlier). Undefined when the text is not
 * RFC 3339 or names an impossible date.
 */
export function parseRfc3339Micros(text: string, round: "down" | "up" = "down"): bigint | undefined {
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
  const beyond = round === "up" && /[1-9]/.test(frac.slice(6)) ? 1n : 0n;
  const subMicros = BigInt(frac.padEnd(6, "0").slice(0, 6)) + beyond;
  return (BigInt(date.getTime()) - BigInt(offsetMinutes) * 60_000n) * 1000n + subMicros;
}
