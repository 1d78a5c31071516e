import { test } from "node:test";
import assert from "node:assert/strict";
import { foldEpoch, runReadOnlyQuery, type Catalog, type QueryOptions } from "../../../src/catalog/index.ts";
import { BadRequestError, QueryTimeoutError, TooManyRowsError } from "../../../src/domain/index.ts";
import { SLOW_PREPARE, interruptedTimeout, labEpoch, tempCatalog } from "./lab-epoch.ts";

const JSON_OPTS: QueryOptions = { maxRows: 1000, timeoutMs: 10_000, format: "json" };
const CSV_OPTS: QueryOptions = { ...JSON_OPTS, format: "csv" };
/** Seconds of work for DuckDB, whatever the machine: far past any timeout used here. */
const SLOW = "SELECT count(*) FROM range(10000000000) a, range(1000) b";

function query(catalog: Catalog, sql: string, params?: unknown[], options: Partial<QueryOptions> = {}) {
  return runReadOnlyQuery(catalog, params ? { sql, params } : { sql }, { ...JSON_OPTS, ...options });
}

test("a query answers a JSON array of objects keyed by column name", async () => {
  await using t = await tempCatalog();
  await foldEpoch(t.catalog, labEpoch("2026-11-22T11:02:13.000Z", 7));
  assert.equal(
    await query(t.catalog, "SELECT epoch, marker_seq, servers_answered[1] AS first FROM hx.epochs"),
    '[{"epoch":"2026-11-22T11:02:13.000Z","marker_seq":7,"first":"l1"}]',
  );
  assert.equal(await query(t.catalog, "SELECT 1 AS a WHERE false"), "[]");
});

test("values render by the documented rules, and repeated column names get a suffix", async () => {
  await using t = await tempCatalog();
  const text = await query(
    t.catalog,
    `SELECT 9007199254740993::BIGINT AS big, 18446744073709551615::UBIGINT AS unlimited, -1::BIGINT AS minus,
            1.5::DECIMAL(18,3) AS d, 12345678901234567.89::DECIMAL(38,2) AS wide, 'nan'::DOUBLE AS nan,
            TIMESTAMPTZ '2026-11-22 11:02:14.312999+00' AS ts, DATE '2026-11-22' AS day, '\\xAA\\xBB'::BLOB AS bytes,
            [1, 2] AS list, {'k': 'v', 'n': NULL} AS struct, MAP {'a': 1} AS map, NULL AS nothing, 1 AS x, 2 AS x`,
  );
  assert.deepEqual(JSON.parse(text), [
    {
      big: "9007199254740993",
      unlimited: "18446744073709551615",
      minus: -1,
      d: 1.5,
      wide: "12345678901234567.89",
      nan: "NaN",
      ts: "2026-11-22T11:02:14.312999Z",
      day: "2026-11-22",
      bytes: "qrs=",
      list: [1, 2],
      struct: { k: "v", n: null },
      map: { a: 1 },
      nothing: null,
      x: 1,
      x_1: 2,
    },
  ]);
});

test("with format csv the reply is RFC 4180 CSV with a header row", async () => {
  await using t = await tempCatalog();
  const csv = await runReadOnlyQuery(
    t.catalog,
    {
      sql: "SELECT * FROM (VALUES (1, 'a,b', NULL, ''), (2, 'say \"hi\"', [1, 2], 'x')) t(n, s, l, e) ORDER BY n",
    },
    CSV_OPTS,
  );
  assert.equal(csv, 'n,s,l,e\r\n1,"a,b",,""\r\n2,"say ""hi""","[1,2]",x\r\n');
});

test("positional parameters are bound, as $n or ?, and cast where the statement needs it", async () => {
  await using t = await tempCatalog();
  await foldEpoch(t.catalog, labEpoch("2026-11-22T11:02:13.000Z", 7));
  assert.equal(
    await query(t.catalog, "SELECT $1 AS s, $2 AS i, $3 AS f, $4 AS b, $5 AS n, $6 AS big", [
      "x",
      42,
      1.5,
      true,
      null,
      2n ** 70n,
    ]),
    '[{"s":"x","i":42,"f":1.5,"b":true,"n":null,"big":"1180591620717411303424"}]',
  );
  assert.equal(
    await query(t.catalog, "SELECT count(*) AS n FROM hx.epochs WHERE epoch = ? AND marker_seq = ?", [
      "2026-11-22T11:02:13Z",
      7,
    ]),
    '[{"n":1}]',
  );
  await assert.rejects(
    query(t.catalog, "SELECT $1, $2", [1]),
    isBadRequest(/has 2 parameters and 1 were given/),
  );
  await assert.rejects(query(t.catalog, "SELECT 1", [1]), isBadRequest(/has 0 parameters and 1 were given/));
  await assert.rejects(query(t.catalog, "SELECT $1", [{ a: 1 }]), isBadRequest(/params\[0\] must be/));
  await assert.rejects(query(t.catalog, "SELECT 1 + $1::INTEGER", ["x"]), isBadRequest(/Could not convert/));
});

test("statements that are not one read-only query are refused with 400 naming what they are", async () => {
  await using t = await tempCatalog();
  for (const [sql, kind] of [
    ["INSERT INTO hx.epochs SELECT * FROM hx.epochs", "INSERT"],
    ["CREATE TABLE x (a INTEGER)", "CREATE"],
    ["ATTACH '/tmp/other.duckdb' AS other", "ATTACH|disabled by configuration"],
    ["COPY hx.epochs TO '/tmp/x.csv'", "COPY|disabled by configuration"],
    ["SET threads = 1", "SET"],
    ["EXPLAIN SELECT 1", "EXPLAIN"],
    ["SELECT 1; SELECT 2", "exactly one statement"],
  ]) {
    await assert.rejects(query(t.catalog, sql!), isBadRequest(new RegExp(kind!)), sql);
  }
  await assert.rejects(query(t.catalog, "SELECT * FROM nope"), isBadRequest(/Catalog Error/));
});

test("files cannot be read: external access is off for the whole instance", async () => {
  await using t = await tempCatalog();
  for (const sql of [
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM read_text('/etc/passwd')",
    "SELECT * FROM '/etc/hosts.csv'",
    "SELECT * FROM glob('/etc/*')",
  ]) {
    await assert.rejects(query(t.catalog, sql), isBadRequest(/disabled by configuration/), sql);
  }
});

test("a query failing after its first rows streamed is a 400, never a result cut short", async () => {
  await using t = await tempCatalog();
  // DuckDB ends such a stream as if it were complete; 22528 of 200000 rows came back before.
  await assert.rejects(
    query(
      t.catalog,
      "SELECT CASE WHEN range = 150000 THEN error('boom') ELSE range END AS v FROM range(200000)",
      undefined,
      { maxRows: 1e6 },
    ),
    (err) => err instanceof BadRequestError && /failed while its result was being read/.test(err.message),
  );
  // The connection is back, out of the aborted transaction, and answers.
  assert.deepEqual(
    await Promise.all([query(t.catalog, "SELECT 1 AS a"), query(t.catalog, "SELECT 2 AS a")]),
    ['[{"a":1}]', '[{"a":2}]'],
  );
});

test("a result over db.query-max-rows is refused with 413, as soon as the cap is passed", async () => {
  await using t = await tempCatalog();
  assert.equal((JSON.parse(await query(t.catalog, "SELECT * FROM range(1000)")) as unknown[]).length, 1000);
  await assert.rejects(
    query(t.catalog, "SELECT * FROM range(1001)"),
    (err) =>
      err instanceof TooManyRowsError &&
      err.code === 413 &&
      /more than 1000 rows/.test(err.message) &&
      /LIMIT/.test(err.message) &&
      /db\.query\.stream/.test(err.message),
  );
  // An endless result is cut at the cap, not read to its end (which would not end: 10^10
  // rows held as JSON run out of memory long before, or past the 60 s timeout, a 408).
  await assert.rejects(
    query(t.catalog, "SELECT * FROM range(10000000000)", undefined, { timeoutMs: 60_000 }),
    TooManyRowsError,
  );
  assert.equal(await query(t.catalog, "SELECT 42 AS answer"), '[{"answer":42}]');
});

test("a query past db.query-timeout is interrupted with 408 and the connection serves again", async () => {
  await using t = await tempCatalog();
  // Interrupted, not left to finish (it would take hours): the 408's cause is DuckDB's interrupt.
  await assert.rejects(
    query(t.catalog, SLOW, undefined, { timeoutMs: 300 }),
    (err) => interruptedTimeout(err) && /db\.query-timeout \(300 ms\)/.test((err as Error).message),
  );
  // Interrupted while rows stream out, DuckDB ends the stream as if complete: still a 408.
  await assert.rejects(
    query(t.catalog, "SELECT * FROM range(100000000)", undefined, { timeoutMs: 300, maxRows: 1e9 }),
    QueryTimeoutError,
  );
  // Both read connections answer (two at once, so each is used).
  assert.deepEqual(
    await Promise.all([query(t.catalog, "SELECT 1 AS a"), query(t.catalog, "SELECT 2 AS a")]),
    ['[{"a":1}]', '[{"a":2}]'],
  );
});

test("a statement still being prepared at db.query-timeout is interrupted there with 408, and the connection serves again", async () => {
  await using t = await tempCatalog();
  // DuckDB folds the constants while preparing: the deadline must interrupt that too, rather
  // than let the prepare run to its end and only then answer 408.
  await assert.rejects(query(t.catalog, SLOW_PREPARE, undefined, { timeoutMs: 300 }), interruptedTimeout);
  assert.deepEqual(
    await Promise.all([query(t.catalog, "SELECT 1 AS a"), query(t.catalog, "SELECT 2 AS a")]),
    ['[{"a":1}]', '[{"a":2}]'],
  );
});

test("queries beyond the read pool wait for a connection, within their own timeout", async () => {
  await using t = await tempCatalog();
  const slow = [1, 2].map(() =>
    assert.rejects(query(t.catalog, SLOW, undefined, { timeoutMs: 1500 }), QueryTimeoutError),
  );
  let slowDone = false;
  void Promise.all(slow).then(() => (slowDone = true));
  // Both connections are busy: this one waits, and its timeout counts the wait, so it gives
  // up while the slow ones still hold them.
  await assert.rejects(query(t.catalog, "SELECT 1", undefined, { timeoutMs: 200 }), QueryTimeoutError);
  assert.equal(slowDone, false, "gave up while waiting");
  const queued = query(t.catalog, "SELECT 3 AS a");
  await Promise.all(slow);
  assert.equal(await queued, '[{"a":3}]');
});

test("closing the catalog stops running queries with 408 and refuses new ones", async () => {
  await using t = await tempCatalog();
  const running = assert.rejects(
    query(t.catalog, SLOW, undefined, { timeoutMs: 60_000 }),
    (err) => err instanceof QueryTimeoutError && /shutting down/.test(err.message),
  );
  // Close at once, while the query is still being prepared: it must not start running after.
  await t.catalog[Symbol.asyncDispose]();
  // Stopped, not left to finish: SLOW would run for hours, well past the test's timeout.
  await running;
  await assert.rejects(query(t.catalog, "SELECT 1"), QueryTimeoutError);
});

function isBadRequest(message: RegExp) {
  return (err: unknown) => err instanceof BadRequestError && err.code === 400 && message.test(err.message);
}
