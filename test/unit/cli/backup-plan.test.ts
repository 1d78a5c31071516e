import { test } from "node:test";
import assert from "node:assert/strict";
import {
  commentStatements,
  resolveTime,
  schemaStatements,
  windowProblem,
  wireWindow,
} from "../../../src/cli/backup-plan.ts";
import { size } from "../../../src/cli/backup-progress.ts";

const NOW = new Date("2026-11-23T12:00:00.000Z");

test("--since and --until take RFC 3339 as given (letters in upper case), or a duration counted back from now", () => {
  const cases: [string, string][] = [
    ["2026-11-22T11:00:00Z", "2026-11-22T11:00:00Z"],
    ["2026-11-22T12:00:00.123456+01:00", "2026-11-22T12:00:00.123456+01:00"],
    ["24h", "2026-11-22T12:00:00.000Z"],
    ["90m", "2026-11-23T10:30:00.000Z"],
    ["1h30m", "2026-11-23T10:30:00.000Z"],
    ["0", "2026-11-23T12:00:00.000Z"],
    // Lower-case letters are RFC 3339 too; DuckDB's cast takes only upper case.
    ["2026-11-22t11:00:00z", "2026-11-22T11:00:00Z"],
  ];
  for (const [given, expected] of cases) assert.equal(resolveTime("--since", given, NOW), expected, given);
  for (const bad of ["yesterday", "2026-11-22", "24", "-1h"]) {
    assert.throws(
      () => resolveTime("--until", bad, NOW),
      /--until must be an RFC 3339 timestamp .* or a duration/,
      bad,
    );
  }
});

test("--since and --until refuse a timestamp that names no real instant, rather than rolling it over", () => {
  const cases: [string, RegExp][] = [
    ["2026-02-30T00:00:00Z", /2026-02 has 28 days/],
    ["2026-02-29T00:00:00Z", /2026-02 has 28 days/],
    ["2026-04-31T12:00:00+02:00", /2026-04 has 30 days/],
    ["2026-11-00T00:00:00Z", /2026-11 has 30 days/],
    ["2026-13-01T00:00:00Z", /there is no month 13/],
    ["2026-00-10T00:00:00Z", /there is no month 00/],
    ["2026-11-22T24:00:00Z", /there is no hour 24/],
    ["2026-11-22T11:60:00Z", /there is no minute 60/],
    ["2016-12-31T23:59:60Z", /there is no second 60/],
    ["2026-11-22T11:00:00+24:00", /the offset 24:00 is out of range/],
    ["2026-11-22T11:00:00-05:60", /the offset 05:60 is out of range/],
  ];
  for (const [given, reason] of cases) {
    assert.throws(
      () => resolveTime("--since", given, NOW),
      (err: Error) => {
        assert.ok(err.message.startsWith(`--since ${given} is not a real date and time: `), err.message);
        assert.match(err.message, reason);
        return true;
      },
    );
  }
  // Leap days where there are some, and the last day of each kind of month.
  for (const good of [
    "2028-02-29T00:00:00Z",
    "2000-02-29T23:59:59Z",
    "2026-04-30T00:00:00Z",
    "2026-12-31T23:59:59.999999Z",
    "2026-11-22T11:00:00+23:59",
  ]) {
    assert.equal(resolveTime("--until", good, NOW), good);
  }
  assert.throws(() => resolveTime("--until", "1900-02-29T00:00:00Z", NOW), /1900-02 has 28 days/);
});

test("--since and --until refuse an instant outside the years DuckDB reads, and take any number of fraction digits", () => {
  const range = /is outside the supported range, 0000-01-01T00:00:00Z to 9999-12-31T23:59:59\.999999Z in UTC/;
  for (const [given, problem] of [
    ["9999-12-31T23:59:59-05:00", range],
    ["0000-01-01T00:30:00+01:00", range],
    ["100000000h", /--until 100000000h before now is earlier than 0000-01-01T00:00:00Z$/],
  ] as const) {
    assert.throws(() => resolveTime("--until", given, NOW), problem, given);
  }
  for (const good of [
    "9999-12-31T23:59:59.999999Z",
    "0000-01-01T00:00:00Z",
    "2026-11-22T11:00:00.1234567891234Z",
  ]) {
    assert.equal(resolveTime("--until", good, NOW), good);
  }
});

test("a window is refused before anything is asked when it starts after it ends, or in the future without --until", () => {
  const cases: [{ since?: string; until?: string }, RegExp | undefined][] = [
    [{}, undefined],
    [{ since: "2026-11-22T11:00:00Z" }, undefined],
    [{ since: "2026-11-23T12:00:00Z" }, undefined],
    [{ until: "2099-01-01T00:00:00Z" }, undefined],
    [{ since: "2026-11-22T11:00:00Z", until: "2026-11-22T11:00:00Z" }, undefined],
    [{ since: "2099-01-01T00:00:00Z", until: "2099-01-02T00:00:00Z" }, undefined],
    [
      { since: "2026-11-22T12:00:00Z", until: "2026-11-22T11:00:00Z" },
      /^--since \(2026-11-22T12:00:00Z\) is after --until \(2026-11-22T11:00:00Z\)$/,
    ],
    [
      { since: "2026-11-23T12:00:01Z" },
      /^--since \(2026-11-23T12:00:01Z\) is in the future \(now is 2026-11-23T12:00:00.000Z\); nothing to back up$/,
    ],
    [{ since: "2026-11-23T13:30:00+01:00" }, /is in the future/],
    // Compared to the last digit, not to Date.parse's millisecond.
    [
      { since: "2026-11-22T10:45:00.0000001Z", until: "2026-11-22T10:45:00Z" },
      /^--since \(2026-11-22T10:45:00.0000001Z\) is after --until \(2026-11-22T10:45:00Z\)$/,
    ],
    [{ since: "2026-11-22T10:45:00.0004Z", until: "2026-11-22T10:45:00.0001Z" }, /is after --until/],
    [{ since: "2026-11-22T10:45:00.00000011Z", until: "2026-11-22T10:45:00.0000001Z" }, /is after --until/],
    [
      { since: "2026-11-22T11:45:00.0000001+01:00", until: "2026-11-22T10:45:00.00000010Z" },
      /no microsecond/,
    ],
    [{ since: "2026-11-22T11:45:00.0000001+01:00", until: "2026-11-22T10:45:00.000001Z" }, undefined],
    [{ since: "2026-11-23T12:00:00.0000001Z" }, /is in the future/],
    // In order, but no microsecond (what the catalog keeps) lies between them.
    [
      { since: "2026-11-22T10:45:00.0000001Z", until: "2026-11-22T10:45:00.0000009Z" },
      /^no microsecond lies between --since .* and --until .*: the catalog keeps epochs to the microsecond; widen the window$/,
    ],
  ];
  for (const [window, expected] of cases) {
    const problem = windowProblem(window, NOW);
    if (expected === undefined) assert.equal(problem, undefined, JSON.stringify(window));
    else assert.match(problem ?? "", expected, JSON.stringify(window));
  }
});

test("the window is sent at the catalog's microsecond in UTC, its start rounded up and its end down", () => {
  assert.deepEqual(wireWindow({}), {});
  assert.deepEqual(
    wireWindow({ since: "2026-11-22T11:45:00.0000001+01:00", until: "2026-11-22T10:46:00.9999999Z" }),
    { since: "2026-11-22T10:45:00.000001Z", until: "2026-11-22T10:46:00.999999Z" },
  );
  assert.deepEqual(wireWindow({ since: "2026-11-22T10:45:00.1230000Z" }), {
    since: "2026-11-22T10:45:00.123000Z",
  });
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
      {
        schema: "hx",
        name: "a",
        ddl: "",
        comment: null,
        columnComments: [],
        estimatedRows: 0,
        cutByWindow: false,
      },
      {
        schema: "main",
        name: "ips",
        ddl: "",
        comment: null,
        columnComments: [],
        estimatedRows: 0,
        cutByWindow: false,
      },
      {
        schema: "hx",
        name: "b",
        ddl: "",
        comment: null,
        columnComments: [],
        estimatedRows: 0,
        cutByWindow: false,
      },
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
