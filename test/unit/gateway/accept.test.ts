import { test } from "node:test";
import assert from "node:assert/strict";
import { wantsCsv } from "../../../src/gateway/accept.ts";

test("Accept headers that ask for CSV get CSV; everything else gets JSON", () => {
  const cases: [string | undefined, boolean][] = [
    [undefined, false],
    ["", false],
    ["*/*", false],
    ["application/json", false],
    ["text/csv", true],
    ["TEXT/CSV", true],
    ["text/csv; charset=utf-8", true],
    ["application/json, text/csv", true],
    ["text/csv;q=0.5, application/json", false],
    ["text/csv, application/json;q=0.9", true],
    ["text/csv;q=0", false],
    ["text/csvx", false],
    // Wildcards rank JSON by their quality; alone they never ask for CSV.
    ["text/*", false],
    ["text/csv;q=0.5, */*", false],
    ["text/csv;q=0.5, application/*", false],
    ["text/csv, */*;q=0.1", true],
    ["text/csv;q=0.5, */*;q=0.5", true],
    ["text/csv;q=0.5, application/*;q=0.8, application/json;q=0.2", true],
  ];
  for (const [accept, csv] of cases) assert.equal(wantsCsv(accept), csv, `Accept: ${accept}`);
});
