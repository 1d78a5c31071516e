/**
 * The migrations' fill of a new column a range of epochs at a time: whole epochs per batch,
 * every row reached exactly once, in a real DuckDB.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { DuckDBInstance } from "@duckdb/node-api";
import { epochBatches, inEpochBatches } from "../../../src/catalog/migrations/epoch-batches.ts";

test("epoch batches hold whole epochs, at most the rows asked for unless one epoch has more", () => {
  const counts: [string, number][] = [
    ["e1", 3],
    ["e2", 3],
    ["e3", 7],
    ["e4", 1],
    ["e5", 2],
    ["e6", 4],
  ];
  assert.deepEqual(epochBatches(counts, 6), [
    ["e1", "e2"],
    ["e3", "e3"],
    ["e4", "e5"],
    ["e6", "e6"],
  ]);
  assert.deepEqual(epochBatches(counts, 100), [["e1", "e6"]]);
  assert.deepEqual(epochBatches([], 6), []);
});

test("an UPDATE run in epoch batches reaches every row of the table once", async () => {
  const instance = await DuckDBInstance.create(":memory:");
  const con = await instance.connect();
  try {
    await con.run("SET TimeZone = 'America/New_York'");
    await con.run("CREATE SCHEMA hx");
    await con.run(
      `CREATE TABLE hx.t AS SELECT TIMESTAMPTZ '2026-11-01 00:00:00+00' + to_minutes(i // 1000) AS epoch, i, 0 AS hits
       FROM range(2500000) r(i)`,
    );
    await inEpochBatches(
      con,
      "t",
      "UPDATE hx.t SET hits = hits + 1 WHERE epoch BETWEEN $1::TIMESTAMPTZ AND $2::TIMESTAMPTZ",
    );
    const counted = await con.runAndReadAll(
      "SELECT count(*)::INTEGER, count(*) FILTER (WHERE hits = 1)::INTEGER FROM hx.t",
    );
    const [rows, once] = counted.getRowsJS()[0] ?? [];
    assert.deepEqual([rows, once], [2_500_000, 2_500_000]);
  } finally {
    con.closeSync();
    instance.closeSync();
  }
});
