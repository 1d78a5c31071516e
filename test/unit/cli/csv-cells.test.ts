import { test } from "node:test";
import assert from "node:assert/strict";
import { parseCsvResult } from "../../../src/cli/csv-cells.ts";
import { arrayReaders, csvWriter } from "../../../src/cli/result-writers.ts";
import type { Cell } from "../../../src/cli/arrow-values.ts";

test("db.query's CSV reads back into cells: NULL apart from the empty string, quotes undone, order kept", () => {
  const parsed = parseCsvResult(
    'x,1,x\r\n42,"a,""b""\r\nc",\r\n007,"",-1.5\r\n2026-01-01T00:00:00.000Z,plain,1e+21\r\n',
  );
  assert.deepEqual(parsed.columns, ["x", "1", "x"]);
  assert.deepEqual(parsed.rows, [
    [42, 'a,"b"\r\nc', null],
    ["007", "", -1.5],
    ["2026-01-01T00:00:00.000Z", "plain", 1e21],
  ]);
  assert.deepEqual(parseCsvResult("a,b\r\n"), { columns: ["a", "b"], rows: [] });
  assert.deepEqual(parseCsvResult(""), { columns: [], rows: [] });
  assert.deepEqual(parseCsvResult("a\nb\n"), { columns: ["a"], rows: [["b"]] });
});

test("what the csv writer writes parses back to the same cells", () => {
  const rows: Cell[][] = [
    [1, "two words", null],
    [-3, "", 'q"uote\nline'],
  ];
  const writer = csvWriter();
  const text = writer.begin(["n", "s", "t"]) + writer.rows(arrayReaders(rows, 3), 0, 2) + writer.end();
  assert.deepEqual(parseCsvResult(text), { columns: ["n", "s", "t"], rows });
});
