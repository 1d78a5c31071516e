import { test } from "node:test";
import assert from "node:assert/strict";
import { renderTable } from "../../../src/cli/table.ts";

const rows = [
  {
    table: "hx.epochs",
    rows: 12,
    comment: "One row per epoch folded: when, which servers answered, and what went wrong.",
  },
  { table: "hx.servers", rows: 3, comment: "Per-epoch server figures." },
];

test("piped, a table is never wrapped", () => {
  const text = renderTable(rows, undefined, { width: undefined });
  assert.equal(text.split("\n")[2], `hx.epochs   12    ${rows[0]!.comment}`);
});

test("on a narrow terminal the last column wraps at spaces under itself, every line within the width", () => {
  const text = renderTable(rows, undefined, { width: 60 });
  assert.deepEqual(text.split("\n"), [
    "table       rows  comment",
    "----------  ----  ------------------------------------------",
    "hx.epochs   12    One row per epoch folded: when, which",
    "                  servers answered, and what went wrong.",
    "hx.servers  3     Per-epoch server figures.",
    "(2 rows)",
    "",
  ]);
  for (const line of text.split("\n")) assert.ok(line.length <= 60, line);
});

test("a terminal too narrow to leave the last column room is not wrapped, nor a table that fits", () => {
  assert.equal(
    renderTable(rows, undefined, { width: 30 }),
    renderTable(rows, undefined, { width: undefined }),
  );
  assert.equal(
    renderTable(rows, undefined, { width: 200 }),
    renderTable(rows, undefined, { width: undefined }),
  );
});
