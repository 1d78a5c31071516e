import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { tableFromIPC, type Decimal, type Table } from "apache-arrow";
import { connect } from "@nats-io/transport-node";
import { headers } from "@nats-io/nats-core";
import { openCatalog } from "../../src/catalog/index.ts";
import { ACCEPT, CSV_MEDIA_TYPE, systemSubjects } from "../../src/protocol/index.ts";
import { registerArrowCodecs } from "../../src/lib/index.ts";
import {
  runNatsmon,
  spawnNatsmon,
  spawnNatsmonOnTerminal,
  type NatsmonProcess,
} from "../harness/natsmon-process.ts";
import { waitFor } from "../harness/wait-for.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { TEST_DB } from "../integration/catalog/lab-epoch.ts";

const SQL = "SELECT * FROM main.query_types ORDER BY id";

/**
 * A result that is still streaming whenever a test interrupts it: 900,000 rows of 10 kB
 * (under db.query-stream.max-rows), about 9 GB, sent only as fast as the client acknowledges.
 */
const ENDLESS_SQL = "SELECT i, repeat('x', 10000) AS pad FROM range(900000) t(i)";

/** 2026-11-22T11:02:14.123456Z in microseconds since the epoch. */
const TS_MICROS = BigInt(Date.UTC(2026, 10, 22, 11, 2, 14, 123)) * 1000n + 456n;

/** The stream's rendering (spec db.query.stream) of the two rows, as CSV. */
const EXPECTED_CSV =
  "id,ts,maybe,blob,amount,huge,big,label\r\n" +
  '1,2026-11-22T11:02:14.123456Z,,AAH+/w==,12.340,170141183460469231731687303715884105727,9007199254740993,"a,""b"""\r\n' +
  '2,2026-11-22T11:02:14.000Z,7,"",-0.500,-5,42,""\r\n';

const EXPECTED_JSON = [
  {
    id: 1,
    ts: "2026-11-22T11:02:14.123456Z",
    maybe: null,
    blob: "AAH+/w==",
    amount: "12.340",
    huge: "170141183460469231731687303715884105727",
    big: "9007199254740993",
    label: 'a,"b"',
  },
  {
    id: 2,
    ts: "2026-11-22T11:02:14.000Z",
    maybe: 7,
    blob: "",
    amount: "-0.500",
    huge: "-5",
    big: 42,
    label: "",
  },
];

describe("natsmon query over db.query.stream on a real node", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let node: NatsmonProcess;
  let url: string;
  const query = (args: readonly string[], stdin?: string) =>
    runNatsmon(["query", "--server", url, "--system", "local", ...args], {}, stdin);

  before(async () => {
    dir = await tempDir();
    // The rendering cases, in a table made before the node owns the file.
    {
      await using catalog = await openCatalog({ path: join(dir.path, "local.duckdb"), db: TEST_DB });
      await catalog.withWriter(async ({ con }) => {
        await con.run(`
          CREATE TABLE main.query_types AS SELECT * FROM (VALUES
            (1, TIMESTAMP '2026-11-22 11:02:14.123456', NULL::INTEGER, '\\x00\\x01\\xFE\\xFF'::BLOB,
             12.34::DECIMAL(18, 3), 170141183460469231731687303715884105727::HUGEINT,
             9007199254740993::BIGINT, 'a,"b"'),
            (2, TIMESTAMP '2026-11-22 11:02:14', 7, ''::BLOB,
             -0.5::DECIMAL(18, 3), -5::HUGEINT, 42::BIGINT, '')
          ) t(id, ts, maybe, blob, amount, huge, big, label)`);
      });
    }
    node = spawnNatsmon(["run", "--data-dir", dir.path], { NATSMON_SINK_EMBEDDED_PORT: "-1" });
    url = await node.waitForUrl();
  });

  after(async () => {
    await node?.kill("SIGTERM");
    await dir?.[Symbol.asyncDispose]();
  });

  test("csv: header, RFC 4180 quoting, RFC 3339 timestamps, empty NULL, base64 blob, decimal strings", async () => {
    const r = await query(["--format", "csv", SQL]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, EXPECTED_CSV);
    assert.equal(r.stderr, "", "no fallback notice and no progress off a terminal");
  });

  test("json: an array of objects with null, strings for decimals and hugeints, exact bigints, nested values", async () => {
    const r = await query(["--format", "json", SQL]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), EXPECTED_JSON);

    // Lists and structs nest in JSON and are their JSON text in CSV; an interval is text.
    const nested = "SELECT [1, 2] AS l, {'a': 1, 'b': 'x'} AS s, INTERVAL 1 DAY AS iv";
    const json = await query(["--format", "json", nested]);
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(JSON.parse(json.stdout), [{ l: [1, 2], s: { a: 1, b: "x" }, iv: "1 day" }]);
    const csv = await query(["--format", "csv", nested]);
    assert.equal(csv.stdout, 'l,s,iv\r\n"[1,2]","{""a"":1,""b"":""x""}",1 day\r\n');
  });

  test("table (the default): aligned columns with the values rendered and a row count", async () => {
    const r = await query(["SELECT id, ts, maybe, amount, label FROM main.query_types ORDER BY id"]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split("\n");
    assert.match(lines[0]!, /^id\s+ts\s+maybe\s+amount\s+label$/);
    assert.match(lines[1]!, /^-+\s+-+\s+-+\s+-+\s+-+$/);
    assert.match(lines[2]!, /^ 1 {2}2026-11-22T11:02:14\.123456Z {3}NULL {2}12\.340 {2}a,"b"$/);
    assert.match(lines[3]!, /^ 2 {2}2026-11-22T11:02:14\.000Z {9}7 {2}-0\.500$/);
    assert.equal(lines[4], "(2 rows)");
  });

  test("table: numeric columns align right by their type, streamed and over the db.query fallback alike", async () => {
    const sql = `SELECT * FROM (VALUES
        (1.5::DECIMAL(10, 3), 9007199254740993::BIGINT, 170141183460469231731687303715884105727::HUGEINT, 0.5::DOUBLE, 'a'),
        (12345.25, 7, -5, 12345.5, 'a longer text')
      ) t(dec, big, huge, dbl, txt)`;
    const streamed = await query([sql]);
    assert.equal(streamed.code, 0, streamed.stderr);
    // The same statement's db.query reply, served for a system with no stream, as an older node would.
    const nc = await connect({ servers: url });
    try {
      const h = headers();
      h.set(ACCEPT, CSV_MEDIA_TYPE);
      const csv = (
        await nc.request(systemSubjects("local").dbQuery, JSON.stringify({ sql }), {
          timeout: 10_000,
          headers: h,
        })
      ).string();
      nc.subscribe(systemSubjects("legacy").dbQuery, { callback: (_err, msg) => void msg.respond(csv) });
      await nc.flush();
      const fallback = await runNatsmon(["query", "--server", url, "--system", "legacy", sql]);
      assert.equal(fallback.code, 0, fallback.stderr);
      const expected = ["right", "right", "right", "right", "left"];
      assert.deepEqual(alignments(streamed.stdout), expected, streamed.stdout);
      assert.deepEqual(alignments(fallback.stdout), expected, fallback.stdout);
    } finally {
      await nc.close();
    }
  });

  test("arrow: the IPC stream on stdout and in --out reads back with apache-arrow, types and values kept", async () => {
    registerArrowCodecs();
    const check = (table: Table) => {
      assert.equal(table.numRows, 2);
      assert.deepEqual(
        table.schema.fields.map((f) => f.name),
        ["id", "ts", "maybe", "blob", "amount", "huge", "big", "label"],
      );
      const ts = table.getChild("ts")!;
      assert.equal((ts.data[0]!.values as BigInt64Array)[0], TS_MICROS, "microseconds kept");
      assert.equal(table.getChild("maybe")!.get(0), null);
      assert.equal(table.getChild("maybe")!.get(1), 7);
      assert.deepEqual([...(table.getChild("blob")!.get(0) as Uint8Array)], [0, 1, 254, 255]);
      assert.equal(table.getChild("big")!.get(0), 9007199254740993n);
      assert.equal(table.getChild("label")!.get(0), 'a,"b"');
      assert.equal((table.getChild("amount")!.type as Decimal).scale, 3);
    };
    const stdout = await query(["--format", "arrow", SQL]);
    assert.equal(stdout.code, 0, stdout.stderr);
    check(tableFromIPC(stdout.stdoutBytes));

    const out = join(dir.path, "result.arrow");
    const file = await query(["--format", "arrow", "--compression", "zstd", "--out", out, SQL]);
    assert.equal(file.code, 0, file.stderr);
    assert.equal(file.stdout, "");
    check(tableFromIPC(await readFile(out)));
  });

  test("SQL comes from stdin with `-` or no argument, parameters bind, --out writes a file", async () => {
    const dash = await query(["--format", "csv", "-"], SQL);
    assert.equal(dash.code, 0, dash.stderr);
    assert.equal(dash.stdout, EXPECTED_CSV);

    const out = join(dir.path, "result.json");
    const piped = await query(
      ["--format", "json", "--out", out, "-p", "2"],
      "SELECT id, label FROM main.query_types WHERE id = $1",
    );
    assert.equal(piped.code, 0, piped.stderr);
    assert.equal(piped.stdout, "");
    assert.deepEqual(JSON.parse(await readFile(out, "utf8")), [{ id: 2, label: "" }]);
  });

  test("-p binds an integer beyond 2^53 with every digit; a number beyond a double is a usage error", async () => {
    const r = await query([
      "--format",
      "json",
      "SELECT $1::VARCHAR AS a, typeof($1) AS ta, $2::VARCHAR AS b, typeof($2) AS tb, typeof($3) AS tc",
      "-p",
      "9007199254740993",
      "170141183460469231731687303715884105727",
      "1.5",
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), [
      {
        a: "9007199254740993",
        ta: "BIGINT",
        b: "170141183460469231731687303715884105727",
        tb: "HUGEINT",
        tc: "DOUBLE",
      },
    ]);
    const inf = await query(["SELECT $1 AS v", "-p", "1e400"]);
    assert.equal(inf.code, 2);
    assert.equal(inf.stdout, "");
    assert.match(inf.stderr, /^natsmon: -p 1e400: the number is beyond a double's range/);
  });

  test("a result of a million wide rows streams through in many chunks, every row written", async () => {
    const out = join(dir.path, "big.csv");
    const r = await query([
      "--format",
      "csv",
      "--out",
      out,
      "SELECT i, repeat('x', 100) || i AS pad FROM range(1000000) t(i)",
    ]);
    assert.equal(r.code, 0, r.stderr);
    const lines = (await readFile(out, "utf8")).split("\r\n");
    assert.equal(lines.length, 1_000_002, "header, a million rows, and the final CRLF");
    assert.equal(lines[0], "i,pad");
    assert.equal(lines[1], `0,${"x".repeat(100)}0`);
    assert.equal(lines[1_000_000], `999999,${"x".repeat(100)}999999`);
  });

  test("an invalid statement exits non-zero with the error's code and description, writing nothing", async () => {
    const out = join(dir.path, "never.csv");
    const bad = await query(["--format", "csv", "--out", out, "SELECT * FROM no_such_table"]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /natsmon: 400: .*no_such_table/);
    assert.equal(existsSync(out), false);

    const write = await query(["DELETE FROM main.query_types"]);
    assert.equal(write.code, 1);
    assert.match(write.stderr, /natsmon: 400: DELETE statements are refused/);

    const none = await query([]);
    assert.equal(none.code, 2);
    assert.match(
      none.stderr,
      /SQL statement is empty: pass the statement as an argument, or pipe it in on stdin/,
    );
  });

  /** A directory of its own holding FILE with `content`, so that leftovers show. */
  const existingFile = async (name: string, content: string) => {
    const folder = join(dir.path, name);
    await mkdir(folder);
    const file = join(folder, "result.out");
    await writeFile(file, content);
    return { folder, file };
  };
  /** `natsmon query` streaming a long result in `format` into `file`. */
  const endlessInto = (format: string, file: string) => [
    "query",
    "--server",
    url,
    "--system",
    "local",
    "--format",
    format,
    "--out",
    file,
    ENDLESS_SQL,
  ];

  test("--out into a missing directory, or naming a directory, is refused before the query runs", async () => {
    const missing = join(dir.path, "no-such-dir", "x.json");
    const r = await query(["--format", "json", "--out", missing, "SELECT 1"]);
    assert.equal(r.code, 2);
    assert.equal(
      r.stderr,
      `natsmon: --out ${missing}: the directory ${join(dir.path, "no-such-dir")} does not exist; create it first\n`,
    );
    const folder = await query(["--format", "csv", "--out", dir.path, "SELECT 1"]);
    assert.equal(folder.code, 2);
    assert.match(folder.stderr, /is a directory; name the file to write, e\.g\. --out \S+result\.csv\n$/);
  });

  test("--out onto an existing file: a failing query leaves it as it was, a successful one replaces it", async () => {
    const { folder, file } = await existingFile("replace", "the user's own data\n");
    for (const format of ["csv", "arrow"]) {
      const bad = await query(["--format", format, "--out", file, "SELECT * FROM no_such_table"]);
      assert.equal(bad.code, 1, format);
      assert.match(bad.stderr, /natsmon: 400: .*no_such_table/);
      assert.equal(await readFile(file, "utf8"), "the user's own data\n", format);
      assert.deepEqual(await readdir(folder), ["result.out"], "no temporary file is left behind");
    }
    // Refused by the server after the stream started: the 413 past db.query-stream.max-rows.
    const tooMany = await query(["--format", "csv", "--out", file, "SELECT i FROM range(2000000) t(i)"]);
    assert.equal(tooMany.code, 1);
    assert.match(tooMany.stderr, /natsmon: 413: /);
    assert.equal(await readFile(file, "utf8"), "the user's own data\n");
    assert.deepEqual(await readdir(folder), ["result.out"]);

    const good = await query(["--format", "csv", "--out", file, "SELECT 42 AS answer"]);
    assert.equal(good.code, 0, good.stderr);
    assert.equal(await readFile(file, "utf8"), "answer\r\n42\r\n");
    assert.deepEqual(await readdir(folder), ["result.out"]);
  });

  test("SIGTERM while a result streams into --out: exit 143, FILE as it was, no temporary file", async () => {
    const { folder, file } = await existingFile("sigterm", "keep me\n");
    const run = spawnNatsmon(endlessInto("csv", file));
    // The temporary file appears with the first rows: the result is streaming.
    await waitFor(async () => (await readdir(folder)).length > 1, {
      message: "rows to reach the temporary file",
    });
    assert.equal(await run.kill("SIGTERM"), 143, run.stderr());
    assert.match(run.stderr(), /natsmon: interrupted by SIGTERM; .*result\.out untouched/);
    assert.equal(await readFile(file, "utf8"), "keep me\n");
    assert.deepEqual(await readdir(folder), ["result.out"]);
  });

  test("on a terminal --format arrow shows rows and bytes received; Ctrl-C exits 130 leaving FILE as it was", async () => {
    const { folder, file } = await existingFile("terminal", "keep me too\n");
    const terminal = spawnNatsmonOnTerminal(endlessInto("arrow", file));
    const progress = /natsmon: ([\d,]+) rows, [\d.]+ [KMGT]?B received…/g;
    // Two progress lines with rows counted: the count comes from the chunks, not a guess.
    await waitFor(() => [...terminal.output().matchAll(progress)].filter((m) => m[1] !== "0").length >= 2, {
      message: "the progress line to count rows",
    });
    terminal.type("\x03");
    assert.equal(await terminal.exited, 130, terminal.output());
    assert.match(terminal.output(), /natsmon: interrupted by SIGINT; .*result\.out untouched/);
    assert.equal(await readFile(file, "utf8"), "keep me too\n");
    assert.deepEqual(await readdir(folder), ["result.out"]);
  });
});

/**
 * How each column of a `--format table` output is aligned, read from the cells narrower
 * than their column (the dashes under the header give each column's span).
 */
function alignments(table: string): string[] {
  const [, dashes = "", ...rest] = table.split("\n");
  const rows = rest.filter((line) => !/^\(\d+ rows?\)$/.test(line) && line !== "");
  return [...dashes.matchAll(/-+/g)].map((m) => {
    const start = m.index;
    const end = start + m[0].length;
    const cells = rows.map((line) => line.slice(start, end).padEnd(end - start));
    if (cells.some((cell) => cell.startsWith(" ") && cell.trim() !== "")) return "right";
    if (cells.some((cell) => cell.endsWith(" "))) return "left";
    return "unknown";
  });
}
