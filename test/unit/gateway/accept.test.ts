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
  ];
  for (const [accept, csv] of cases) assert.equal(wantsCsv(accept), csv, `Accept: ${accept}`);
});
