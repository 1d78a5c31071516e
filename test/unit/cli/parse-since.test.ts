import { test } from "node:test";
import assert from "node:assert/strict";
import { parseSince } from "../../../src/cli/endpoint-config.ts";

const NOW = new Date("2026-11-22T12:00:00Z");

test("deliveries --since takes a duration back from now, days included, or an RFC 3339 time", () => {
  const cases: [string, string][] = [
    ["90m", "2026-11-22T10:30:00.000Z"],
    ["7d", "2026-11-15T12:00:00.000Z"],
    ["1h30m", "2026-11-22T10:30:00.000Z"],
    ["2026-11-22T11:00:00+01:00", "2026-11-22T10:00:00.000Z"],
    ["2026-11-22t11:00:00z", "2026-11-22T11:00:00.000Z"],
  ];
  for (const [given, expected] of cases) assert.equal(parseSince(given, NOW).toISOString(), expected, given);
});

test("deliveries --since refuses what is neither, and a date that does not exist, naming the flag", () => {
  for (const bad of ["garbage", "1", "", "-1h", "2026-02-30T00:00:00Z", "March 7"]) {
    assert.throws(() => parseSince(bad, NOW), /^Error: --since /, bad);
  }
});
