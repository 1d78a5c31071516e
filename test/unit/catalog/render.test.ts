import { test } from "node:test";
import assert from "node:assert/strict";
import {
  BIGINT,
  BLOB,
  BOOLEAN,
  DATE,
  DECIMAL,
  DOUBLE,
  DuckDBDateValue,
  DuckDBTimestampTZValue,
  HUGEINT,
  INTEGER,
  LIST,
  MAP,
  STRUCT,
  TIMESTAMP,
  TIMESTAMP_NS,
  TIMESTAMP_S,
  TIMESTAMPTZ,
  UBIGINT,
  UNION,
  VARCHAR,
  blobValue,
  dateValue,
  decimalValue,
  listValue,
  mapValue,
  structValue,
  timestampNanosValue,
  timestampSecondsValue,
  timestampTZValue,
  timestampValue,
  unionValue,
  type DuckDBType,
  type DuckDBValue,
} from "@duckdb/node-api";
import { renderValue, type JsonValue } from "../../../src/catalog/render.ts";

const EPOCH_MS = Date.parse("2026-11-22T11:02:14.312Z");
const micros = (ms: number, extra = 0n) => BigInt(ms) * 1000n + extra;

const cases: [string, DuckDBValue, DuckDBType, JsonValue][] = [
  ["NULL of any type is null", null, BIGINT, null],
  ["a boolean stays a boolean", true, BOOLEAN, true],
  ["an INTEGER is a number", -42, INTEGER, -42],
  ["a BIGINT within 2^53 is a number", 9007199254740991n, BIGINT, 9007199254740991],
  ["a BIGINT beyond 2^53 is a decimal string", 9007199254740993n, BIGINT, "9007199254740993"],
  ["a negative BIGINT beyond -2^53 is a decimal string", -9007199254740993n, BIGINT, "-9007199254740993"],
  [
    "UBIGINT 2^64-1 (NATS unlimited) is exact, as a string",
    18446744073709551615n,
    UBIGINT,
    "18446744073709551615",
  ],
  ["a HUGEINT is exact", 2n ** 100n, HUGEINT, "1267650600228229401496703205376"],
  ["a DOUBLE is a number", 1.5, DOUBLE, 1.5],
  ["NaN is a string (JSON has no NaN)", NaN, DOUBLE, "NaN"],
  ["-Infinity is a string", -Infinity, DOUBLE, "-Infinity"],
  ["a DECIMAL that a double holds is a number", decimalValue(12300n, 18, 3), DECIMAL(18, 3), 12.3],
  ["0.1 is a number: its double rounds back to 0.1", decimalValue(1n, 4, 1), DECIMAL(4, 1), 0.1],
  [
    "a DECIMAL with more digits than a double holds is its exact string",
    decimalValue(1234567890123456789n, 38, 2),
    DECIMAL(38, 2),
    "12345678901234567.89",
  ],
  ["a VARCHAR is a string", "héllo", VARCHAR, "héllo"],
  ["a BLOB is base64", blobValue(new Uint8Array([0, 1, 2, 255])), BLOB, "AAEC/w=="],
  [
    "TIMESTAMPTZ with whole milliseconds has three digits",
    timestampTZValue(micros(EPOCH_MS)),
    TIMESTAMPTZ,
    "2026-11-22T11:02:14.312Z",
  ],
  [
    "TIMESTAMPTZ keeps its microseconds",
    timestampTZValue(micros(EPOCH_MS, 999n)),
    TIMESTAMPTZ,
    "2026-11-22T11:02:14.312999Z",
  ],
  ["TIMESTAMP (no zone) is read as UTC", timestampValue(micros(0)), TIMESTAMP, "1970-01-01T00:00:00.000Z"],
  ["a timestamp before 1970 is right", timestampValue(-1n), TIMESTAMP, "1969-12-31T23:59:59.999999Z"],
  [
    "TIMESTAMP_NS keeps its nanoseconds",
    timestampNanosValue(1_000_000_001n),
    TIMESTAMP_NS,
    "1970-01-01T00:00:01.000000001Z",
  ],
  ["TIMESTAMP_S has milliseconds", timestampSecondsValue(60n), TIMESTAMP_S, "1970-01-01T00:01:00.000Z"],
  ["infinity is a word", DuckDBTimestampTZValue.PosInf, TIMESTAMPTZ, "infinity"],
  ["-infinity too", DuckDBTimestampTZValue.NegInf, TIMESTAMPTZ, "-infinity"],
  [
    "a year past 9999 has ISO 8601's expanded form, as the CLI writes it",
    timestampValue(micros(253_402_300_800_000)),
    TIMESTAMP,
    "+010000-01-01T00:00:00.000Z",
  ],
  [
    "so has one before year 0 (283230 BC), beyond what a JS Date holds too",
    timestampValue(-9_000_000_000_000_000_000n),
    TIMESTAMP,
    "-283229-05-10T08:00:00.000Z",
  ],
  ["a DATE is YYYY-MM-DD", dateValue(20414), DATE, "2025-11-22"],
  ["a BC DATE is an astronomical year, expanded", dateValue(-735_525), DATE, "-000044-03-15"],
  ["an infinite DATE is a word", DuckDBDateValue.PosInf, DATE, "infinity"],
  [
    "a LIST is an array of rendered items",
    listValue([1n, null, 2n ** 60n]),
    LIST(BIGINT),
    [1, null, "1152921504606846976"],
  ],
  [
    "a STRUCT is an object",
    structValue({ a: 1, b: listValue(["x"]) }),
    STRUCT({ a: INTEGER, b: LIST(VARCHAR) }),
    { a: 1, b: ["x"] },
  ],
  [
    "a MAP is an object keyed by the keys' text",
    mapValue([
      { key: "k", value: 1n },
      { key: "l", value: null },
    ]),
    MAP(VARCHAR, BIGINT),
    { k: 1, l: null },
  ],
  [
    "a MAP with integer keys uses their JSON text",
    mapValue([{ key: 7, value: "v" }]),
    MAP(INTEGER, VARCHAR),
    { "7": "v" },
  ],
  [
    "a MAP key `__proto__` is a key like any other",
    mapValue([
      { key: "__proto__", value: 7n },
      { key: "k", value: 1n },
    ]),
    MAP(VARCHAR, BIGINT),
    JSON.parse('{"__proto__": 7, "k": 1}'),
  ],
  ["a UNION is its member's value", unionValue("n", 5n), UNION({ s: VARCHAR, n: BIGINT }), 5],
];

for (const [name, value, type, expected] of cases) {
  test(`db.query rendering: ${name}`, () => {
    assert.deepEqual(renderValue(value, type), expected);
  });
}
