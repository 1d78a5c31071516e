import { test } from "node:test";
import assert from "node:assert/strict";
import { DuckDBInstance } from "@duckdb/node-api";
import { isoDate, isoTimestamp } from "../../../src/lib/index.ts";

const MS_PER_DAY = 86_400_000;
/** The ±100,000,000 days a JS Date holds. */
const DATE_LIMIT_DAYS = 100_000_000;

test("within a Date's range every day and instant reads as Date#toISOString writes it", () => {
  for (let days = -DATE_LIMIT_DAYS; days <= DATE_LIMIT_DAYS; days += 997) {
    const iso = new Date(days * MS_PER_DAY).toISOString();
    assert.equal(isoDate(days), iso.slice(0, iso.indexOf("T")), String(days));
    // An instant inside that day, to the nanosecond.
    const ms = days * MS_PER_DAY + ((((days * 7919) % MS_PER_DAY) + MS_PER_DAY) % MS_PER_DAY);
    const nanos = BigInt(ms) * 1_000_000n + 123_456n;
    assert.equal(isoTimestamp(nanos), new Date(ms).toISOString().replace("Z", "123456Z"), String(nanos));
  }
});

test("fractions stop at the type's precision and drop trailing groups of zeros", () => {
  assert.equal(isoTimestamp(1_000_000_001n, 9), "1970-01-01T00:00:01.000000001Z");
  assert.equal(isoTimestamp(1_000_000_001n, 6), "1970-01-01T00:00:01.000Z");
  assert.equal(isoTimestamp(1_000_123_000n, 9), "1970-01-01T00:00:01.000123Z");
  assert.equal(isoTimestamp(1_500_000_000n, 0), "1970-01-01T00:00:01.500Z");
  assert.equal(isoTimestamp(-1n), "1969-12-31T23:59:59.999999999Z");
});

test("days past a Date's range, both ways, agree with DuckDB's calendar", async () => {
  const db = await DuckDBInstance.create(":memory:");
  const con = await db.connect();
  const cases: [string, string][] = [
    ["5881580-07-10", "+5881580-07-10"],
    ["5000000-02-29", "+5000000-02-29"],
    ["275761-01-01", "+275761-01-01"],
    ["10000-01-01", "+010000-01-01"],
    ["0001-01-01 (BC)", "0000-01-01"],
    ["0045-03-15 (BC)", "-000044-03-15"],
    ["4000001-02-29 (BC)", "-4000000-02-29"],
    ["5877642-06-25 (BC)", "-5877641-06-25"],
  ];
  for (const [duck, iso] of cases) {
    const reader = await con.runAndReadAll(`SELECT (DATE '${duck}' - DATE '1970-01-01')::BIGINT AS d`);
    const days = Number(reader.getRowObjects()[0]!.d);
    assert.equal(isoDate(days), iso, duck);
  }
  const reader = await con.runAndReadAll(
    "SELECT epoch_us(TIMESTAMP '290000-01-01 12:34:56.789012')::BIGINT AS us",
  );
  const us = reader.getRowObjects()[0]!.us as bigint;
  assert.equal(isoTimestamp(us * 1000n, 6), "+290000-01-01T12:34:56.789012Z");
  con.closeSync();
  db.closeSync();
});
