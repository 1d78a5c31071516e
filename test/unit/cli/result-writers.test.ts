import { test } from "node:test";
import assert from "node:assert/strict";
import type { Cell } from "../../../src/cli/arrow-values.ts";
import {
  arrayReaders,
  csvField,
  resultWriter,
  tableWriter,
  type ResultWriter,
  type TextFormat,
} from "../../../src/cli/result-writers.ts";

/** Writes the rows in batches of `batch` rows, as the stream delivers them. */
function write(
  writer: ResultWriter,
  columns: readonly string[],
  rows: readonly (readonly Cell[])[],
  batch = 2,
): string {
  let out = writer.begin(columns);
  for (let i = 0; i < rows.length; i += batch) {
    const slice = rows.slice(i, i + batch);
    out += writer.rows(arrayReaders(slice, columns.length), 0, slice.length);
  }
  return out + writer.end();
}

const COLUMNS = ["id", "name", "ts", "amount", "blob", "tags"];
const ROWS: Cell[][] = [
  [1, 'say "hi", then\nleave', "2025-11-22T12:02:14.123456Z", "12.340", "AAH+/w==", ["a", "b"]],
  ["9007199254740993", "", "2025-11-22T12:02:14.000Z", "-0.500", "", { k: 1 }],
  [null, null, null, null, null, null],
];

test("json: an array of objects, one row per line, that parses back to the cells", () => {
  const text = write(resultWriter("json"), COLUMNS, ROWS);
  assert.equal(text.split("\n").length, ROWS.length + 3);
  assert.deepEqual(
    JSON.parse(text),
    ROWS.map((row) => Object.fromEntries(COLUMNS.map((c, i) => [c, row[i]]))),
  );
  assert.equal(write(resultWriter("json"), COLUMNS, []), "[]\n");
  assert.deepEqual(JSON.parse(write(resultWriter("json"), ["a", "a", "a_1"], [[1, 2, 3]])), [
    { a: 1, a_2: 2, a_1: 3 },
  ]);
});

test("csv: RFC 4180 with a header, CRLF, and NULL apart from the empty string", () => {
  const text = write(resultWriter("csv"), COLUMNS, ROWS);
  assert.equal(
    text,
    "id,name,ts,amount,blob,tags\r\n" +
      '1,"say ""hi"", then\nleave",2025-11-22T12:02:14.123456Z,12.340,AAH+/w==,"[""a"",""b""]"\r\n' +
      '9007199254740993,"",2025-11-22T12:02:14.000Z,-0.500,"","{""k"":1}"\r\n' +
      ",,,,,\r\n",
  );
  assert.equal(write(resultWriter("csv"), ["a,b", "c"], []), '"a,b",c\r\n');
  const fields: [Cell, string][] = [
    [null, ""],
    ["", '""'],
    [true, "true"],
    [-1.5, "-1.5"],
    ["cr\r", '"cr\r"'],
  ];
  for (const [cell, field] of fields) assert.equal(csvField(cell), field);
});

test("table: aligned columns, numbers to the right, NULL shown, control characters escaped in values and names", () => {
  const text = write(
    resultWriter("table"),
    ["n", "word"],
    [
      [5, "a\tb"],
      [123, null],
      [null, "longer word"],
    ],
  );
  assert.equal(
    text,
    "n     word\n" + //
      "----  -----------\n" +
      "   5  a\\tb\n" +
      " 123  NULL\n" +
      "NULL  longer word\n" +
      "(3 rows)\n",
  );
  assert.equal(write(resultWriter("table"), ["x"], []), "x\n-\n(0 rows)\n");
  // Column names too, and every other control character (NUL, ESC…) as \xNN.
  assert.equal(
    write(resultWriter("table"), ["two\nlines"], [["nul\u0000 esc\u001b del\u007f"]]),
    "two\\nlines\n" + //
      "-----------------------\n" +
      "nul\\x00 esc\\x1b del\\x7f\n" +
      "(1 row)\n",
  );
  // A column that also holds text is aligned left throughout.
  assert.equal(
    write(resultWriter("table"), ["mixed"], [[1], ["ab"], [null]]),
    "mixed\n-----\n1\nab\nNULL\n(3 rows)\n",
  );
});

test("table: past the alignment window rows stream out in the widths of the first rows", () => {
  const writer = tableWriter(2);
  let out = writer.begin(["v"]);
  out += writer.rows(arrayReaders([["ab"]], 1), 0, 1);
  assert.equal(out, "", "the first rows are held to align them");
  out += writer.rows(arrayReaders([["x"], ["abc"], ["a"], ["abcdef"]], 1), 1, 4);
  out += writer.end();
  assert.equal(out, "v\n---\nab\nabc\na\nabcdef\n(4 rows)\n");
});

test("every format writes the same result for any batching", () => {
  const rows: Cell[][] = Array.from({ length: 7 }, (_, i) => [i, `r${i}`]);
  for (const format of ["json", "csv", "table"] as TextFormat[]) {
    const whole = write(resultWriter(format), ["i", "s"], rows, 7);
    for (const batch of [1, 3]) assert.equal(write(resultWriter(format), ["i", "s"], rows, batch), whole);
  }
});
