import { test } from "node:test";
import assert from "node:assert/strict";
import {
  BIGINT,
  BLOB,
  BOOLEAN,
  DOUBLE,
  DuckDBListValue,
  DuckDBTimestampTZValue,
  INTEGER,
  LIST,
  TIMESTAMPTZ,
  UBIGINT,
  VARCHAR,
  type DuckDBType,
} from "@duckdb/node-api";
import { convertValue, isWritableType, parseRfc3339Micros } from "../../../src/catalog/values.ts";

test("RFC 3339 is read to the microsecond, in any offset, and impossible dates are refused", () => {
  const base = BigInt(Date.parse("2026-11-22T11:02:14Z")) * 1000n;
  const cases: [string, bigint | undefined][] = [
    ["2026-11-22T11:02:14Z", base],
    ["2026-11-22T11:02:14.312999082Z", base + 312999n],
    ["2026-11-22T11:02:14.5Z", base + 500000n],
    // RFC 3339 sets no limit on fraction digits; those past the microsecond are cut.
    ["2026-11-22T11:02:14.3129990829999Z", base + 312999n],
    ["2026-11-22t11:02:14z", base],
    ["2026-11-22T12:02:14+01:00", base],
    ["2026-11-22T10:32:14-00:30", base],
    ["2026-11-22 11:02:14Z", base],
    ["1970-01-01T00:00:00Z", 0n],
    ["0001-01-01T00:00:00Z", -62135596800000000n],
    ["2026-02-30T00:00:00Z", undefined],
    ["2026-11-22T24:00:00Z", undefined],
    ["2026-11-22T11:02:14", undefined],
    ["yesterday", undefined],
  ];
  for (const [text, expected] of cases) assert.equal(parseRfc3339Micros(text), expected, text);
});

test("RFC 3339 rounded up moves to the next microsecond only for digits past it that are not zero", () => {
  const base = BigInt(Date.parse("2026-11-22T11:02:14Z")) * 1000n;
  const cases: [string, bigint][] = [
    ["2026-11-22T11:02:14Z", base],
    ["2026-11-22T11:02:14.000000000Z", base],
    ["2026-11-22T11:02:14.0000001Z", base + 1n],
    ["2026-11-22T11:02:14.312999001Z", base + 313000n],
    ["2026-11-22T11:02:14.9999999Z", base + 1_000_000n],
    ["1969-12-31T23:59:59.9999991Z", 0n],
  ];
  for (const [text, expected] of cases) assert.equal(parseRfc3339Micros(text, "up"), expected, text);
});

test("values that fit their column are converted exactly", () => {
  const cases: [DuckDBType, unknown, unknown][] = [
    [INTEGER, 7, 7],
    [INTEGER, 7n, 7],
    [BIGINT, -1, -1n],
    [BIGINT, 9223372036854775807n, 9223372036854775807n],
    [UBIGINT, 18446744073709551615n, 18446744073709551615n],
    [DOUBLE, 2, 2],
    [DOUBLE, 3n, 3],
    [BOOLEAN, false, false],
    [VARCHAR, "", ""],
    [INTEGER, undefined, null],
    [VARCHAR, null, null],
  ];
  for (const [type, input, expected] of cases) {
    const converted = convertValue(type, input);
    assert.deepEqual(converted, { ok: true, value: expected }, `${type.toString()} ${String(input)}`);
  }
});

test("values that do not fit their column are refused with a reason, never wrapped or rounded", () => {
  const cases: [DuckDBType, unknown][] = [
    [INTEGER, 2 ** 31],
    [INTEGER, 1.5],
    [BIGINT, 2n ** 63n],
    [UBIGINT, -1],
    // What JSON.parse makes of 2^64-1 (rounded up past the UBIGINT range).
    [UBIGINT, 18446744073709552000n],
    [BIGINT, "12"],
    [VARCHAR, 12],
    [BOOLEAN, "true"],
    [TIMESTAMPTZ, "not a time"],
    [LIST(VARCHAR), "a"],
    [LIST(VARCHAR), ["a", 1]],
  ];
  for (const [type, input] of cases) {
    const converted = convertValue(type, input);
    assert.equal(converted.ok, false, `${type.toString()} ${String(input)}`);
    if (!converted.ok) assert.match(converted.reason, / is not a /);
  }
});

test("timestamps become TIMESTAMPTZ values and Go's zero time means NULL", () => {
  const converted = convertValue(TIMESTAMPTZ, "2026-11-22T11:02:14.312999082Z");
  assert.ok(converted.ok && converted.value instanceof DuckDBTimestampTZValue);
  assert.equal(converted.value.micros, BigInt(Date.parse("2026-11-22T11:02:14.312Z")) * 1000n + 999n);
  assert.deepEqual(convertValue(TIMESTAMPTZ, "0001-01-01T00:00:00Z"), { ok: true, value: null });
});

test("lists are converted item by item", () => {
  const converted = convertValue(LIST(BIGINT), [1, 2n]);
  assert.ok(converted.ok && converted.value instanceof DuckDBListValue);
  assert.deepEqual(converted.value.items, [1n, 2n]);
});

test("only the types the fold knows are writable", () => {
  for (const type of [
    BOOLEAN,
    INTEGER,
    BIGINT,
    UBIGINT,
    DOUBLE,
    VARCHAR,
    TIMESTAMPTZ,
    LIST(VARCHAR),
    LIST(BIGINT),
  ]) {
    assert.equal(isWritableType(type), true, type.toString());
  }
  for (const type of [BLOB, LIST(BLOB)]) assert.equal(isWritableType(type), false, type.toString());
});
