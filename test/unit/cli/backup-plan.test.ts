import { test } from "node:test";
import assert from "node:assert/strict";
import { commentStatements, resolveTime, schemaStatements } from "../../../src/cli/backup-plan.ts";
import { size } from "../../../src/cli/backup-progress.ts";

const NOW = new Date("2026-11-23T12:00:00.000Z");

test("--since and --until take RFC 3339 as given, or a duration counted back from now", () => {
  const cases: [string, string][] = [
    ["2026-11-22T11:00:00Z", "2026-11-22T11:00:00Z"],
    ["2026-11-22T12:00:00.123456+01:00", "2026-11-22T12:00:00.123456+01:00"],
    ["24h", "2026-11-22T12:00:00.000Z"],
    ["90m", "2026-11-23T10:30:00.000Z"],
    ["1h30m", "2026-11-23T10:30:00.000Z"],
    ["0", "2026-11-23T12:00:00.000Z"],
  ];
  for (const [given, expected] of cases) assert.equal(resolveTime("--since", given, NOW), expected, given);
  for (const bad of ["yesterday", "2026-11-22", "2026-13-01T00:00:00Z", "24", "-1h"]) {
    assert.throws(
      () => resolveTime("--until", bad, NOW),
      /--until must be an RFC 3339 timestamp .* or a duration/,
      bad,
    );
  }
});

test("comments are restored with quotes escaped, on the table and on each column", () => {
  assert.equal(
    commentStatements("TABLE", {
      schema: "hx",
      name: "server_stats",
      comment: "Per-epoch figures; it's the server's",
      columnComments: [{ column: "rows", comment: "Rows." }],
    }),
    `COMMENT ON TABLE "hx"."server_stats" IS 'Per-epoch figures; it''s the server''s';\n` +
      `COMMENT ON COLUMN "hx"."server_stats"."rows" IS 'Rows.';`,
  );
  assert.equal(commentStatements("VIEW", { schema: "hx", name: "v", comment: null, columnComments: [] }), "");
  assert.equal(
    schemaStatements([
      { schema: "hx", name: "a", ddl: "", comment: null, columnComments: [], estimatedRows: 0 },
      { schema: "main", name: "ips", ddl: "", comment: null, columnComments: [], estimatedRows: 0 },
      { schema: "hx", name: "b", ddl: "", comment: null, columnComments: [], estimatedRows: 0 },
    ]),
    'CREATE SCHEMA IF NOT EXISTS "hx";',
  );
});

test("progress sizes read in B, KB, MB and GB", () => {
  assert.deepEqual([0, 999, 1000, 1_536_000, 2_500_000_000].map(size), [
    "0 B",
    "999 B",
    "1.0 KB",
    "1.5 MB",
    "2.5 GB",
  ]);
});
