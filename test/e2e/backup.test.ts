import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";
import type { NatsConnection } from "@nats-io/nats-core";
import { readArrowStream, StreamFailedError } from "../../src/cli/index.ts";
import { systemSubjects } from "../../src/protocol/index.ts";
import { sqlQuery } from "../harness/api-client.ts";
import { runNatsmon } from "../harness/natsmon-process.ts";
import type { tempDir } from "../harness/temp-dir.ts";
import { backupArgs, epochAt, startLabNode, SYSTEM, type LabNode } from "./backup-fixture.ts";

const subjects = systemSubjects(SYSTEM);
/** The node's db.query-stream.max-rows: far fewer rows than most tables of the backup set hold. */
const STREAM_MAX_ROWS = 5;

/** The backup set as the spec defines it, read from the node's catalog. */
const BACKUP_SET_SQL = `SELECT schema_name || '.' || table_name AS name FROM duckdb_tables()
  WHERE database_name = current_database()
    AND ((schema_name = 'hx' AND table_name <> 'migrations') OR (schema_name = 'main' AND table_name = 'ips'))
  ORDER BY name`;

/** Row count and an order-free fingerprint of every value of a relation. */
const fingerprint = (select: string) =>
  `SELECT count(*)::BIGINT AS n, coalesce(sum(hash(t)::HUGEINT), 0)::VARCHAR AS h FROM (${select}) t`;

interface Fingerprint {
  n: number;
  h: string;
}

/** A backup file opened read-only with DuckDB, as a user would open it. */
async function openBackup(path: string): Promise<{ con: DuckDBConnection } & AsyncDisposable> {
  const instance = await DuckDBInstance.create(path, { access_mode: "READ_ONLY" });
  const con = await instance.connect();
  await con.run("SET TimeZone = 'UTC'");
  return {
    con,
    [Symbol.asyncDispose]: () => {
      con.closeSync();
      instance.closeSync();
      return Promise.resolve();
    },
  };
}

async function local(con: DuckDBConnection, sql: string): Promise<Record<string, unknown>[]> {
  return (await con.runAndReadAll(sql)).getRowObjectsJson();
}

async function localPrint(con: DuckDBConnection, select: string): Promise<Fingerprint> {
  const [row] = await local(con, fingerprint(select));
  return { n: Number(row!.n), h: String(row!.h) };
}

describe("natsmon backup and db.backup.stream on a catalog of 50 epochs", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let url: string;
  let nc: NatsConnection;
  let tables: string[];

  const remotePrint = async (select: string): Promise<Fingerprint> => {
    const [row] = await sqlQuery<Fingerprint>(nc, SYSTEM, fingerprint(select));
    return { n: Number(row!.n), h: String(row!.h) };
  };
  const backup = (...args: string[]) => runNatsmon(backupArgs(url, ...args));

  let lab: LabNode | undefined;
  before(async () => {
    // Long timeouts: the interruption tests hold the backup connection with a stream they never ack.
    // A db.query.stream row cap far below most tables' rows, which backups must not heed.
    lab = await startLabNode("natsmon-backup-", {
      dbYaml: `query-timeout: 120s, query-stream: {ack-timeout: 120s, max-rows: ${STREAM_MAX_ROWS}}`,
    });
    ({ dir, url, nc } = lab);
    tables = (await sqlQuery<{ name: string }>(nc, SYSTEM, BACKUP_SET_SQL)).map((r) => r.name);
  });

  after(async () => {
    await lab?.[Symbol.asyncDispose]();
  });

  test("a full backup restores every table with the node's row counts, columns, types, comments and values", async () => {
    const out = join(dir.path, "full.duckdb");
    const run = await backup("--out", out);
    assert.equal(run.code, 0, run.stderr);
    assert.ok(tables.length > 40, `the backup set has ${tables.length} tables`);
    // Progress: one line per table, counted done/total, with rows and bytes.
    for (const [i, table] of tables.entries()) {
      const line = new RegExp(
        `^\\[\\s*${i + 1}/${tables.length}\\] ${table.replace(".", "\\.")}: [\\d,]+ rows, [\\d.]+ [KMG]?B in `,
        "m",
      );
      assert.match(run.stderr, line);
    }
    // Then the work after the last table, said before it is done.
    assert.match(
      run.stderr,
      /^finishing: asking the node what changed during the copy, recreating \d+ views, writing .*full\.duckdb$/m,
    );
    assert.match(run.stdout, new RegExp(`${tables.length} tables, \\d+ views, [\\d,]+ rows`));
    assert.deepEqual(await readdir(dir.path).then((names) => names.filter((n) => n.includes("full"))), [
      "full.duckdb",
    ]);

    await using file = await openBackup(out);
    const restored = (await local(file.con, BACKUP_SET_SQL)).map((r) => r.name);
    assert.deepEqual(restored, tables);
    for (const table of tables) {
      assert.deepEqual(
        await localPrint(file.con, `SELECT * FROM ${table}`),
        await remotePrint(`SELECT * FROM ${table}`),
        `rows and values of ${table}`,
      );
    }
    // main.page_views (usage.record) and main.catalog_identity (the file's own id) are not in
    // the backup set (spec: hx tables and main.ips).
    // Base tables only: a view's column list is fixed when it is created, so a view made
    // before a migration added columns to its table (hx.servers) lists fewer in the catalog
    // than its recreation in the backup, while both answer queries alike (checked below).
    const columnsSql = `SELECT c.schema_name, c.table_name, c.column_name, c.data_type, c.comment
      FROM duckdb_columns() c JOIN duckdb_tables() t USING (database_name, schema_name, table_name)
      WHERE c.database_name = current_database() AND c.schema_name IN ('hx', 'main')
        AND c.table_name NOT IN ('migrations', 'page_views', 'catalog_identity')
      ORDER BY c.schema_name, c.table_name, c.column_index`;
    assert.deepEqual(await local(file.con, columnsSql), await sqlQuery(nc, SYSTEM, columnsSql));
    const tableComments = `SELECT schema_name, table_name, comment FROM duckdb_tables()
      WHERE database_name = current_database()
        AND table_name NOT IN ('migrations', 'page_views', 'catalog_identity') ORDER BY ALL`;
    assert.deepEqual(await local(file.con, tableComments), await sqlQuery(nc, SYSTEM, tableComments));
    // The hx views come along, so the backup reads like the catalog.
    const views = `SELECT view_name FROM duckdb_views() WHERE database_name = current_database() AND schema_name = 'hx' ORDER BY ALL`;
    assert.deepEqual(await local(file.con, views), await sqlQuery(nc, SYSTEM, views));
    for (const { view_name: view } of await sqlQuery<{ view_name: string }>(nc, SYSTEM, views)) {
      assert.deepEqual(
        await localPrint(file.con, `SELECT * FROM hx.${view}`),
        await remotePrint(`SELECT * FROM hx.${view}`),
        `hx.${view} reads the same`,
      );
    }
  });

  test("a window backup holds exactly the window's epoch rows and only the identities and options they refer to", async () => {
    const out = join(dir.path, "window.duckdb");
    const [start, end] = [epochAt(30), epochAt(39)];
    const run = await backup("--out", out, "--since", start, "--until", end);
    assert.equal(run.code, 0, run.stderr);
    await using file = await openBackup(out);
    const inWindow = `epoch BETWEEN '${start}'::TIMESTAMPTZ AND '${end}'::TIMESTAMPTZ`;

    const epochTables = (
      await sqlQuery<{ name: string }>(
        nc,
        SYSTEM,
        `SELECT 'hx.' || table_name AS name FROM duckdb_columns() WHERE schema_name = 'hx' AND column_name = 'epoch'
           AND table_name NOT LIKE '%\\_opts' ESCAPE '\\'
           AND table_name IN (SELECT table_name FROM duckdb_tables() WHERE schema_name = 'hx') ORDER BY ALL`,
      )
    ).map((r) => r.name);
    assert.ok(epochTables.includes("hx.epochs") && epochTables.includes("hx.server_stats"));
    for (const table of epochTables) {
      assert.deepEqual(
        await localPrint(file.con, `SELECT * FROM ${table}`),
        await remotePrint(`SELECT * FROM ${table} WHERE ${inWindow}`),
        `rows of ${table} in the window`,
      );
    }
    assert.equal((await localPrint(file.con, "SELECT * FROM hx.epochs")).n, 10);

    // Every view over the window reads the same from the backup as from the node: each row
    // found its identity and the options in force at its epoch.
    const epochViews = (
      await sqlQuery<{ name: string }>(
        nc,
        SYSTEM,
        `SELECT DISTINCT 'hx.' || v.view_name AS name FROM duckdb_views() v
           JOIN duckdb_columns() c ON c.schema_name = v.schema_name AND c.table_name = v.view_name
          WHERE v.schema_name = 'hx' AND NOT v.internal AND c.column_name = 'epoch' ORDER BY ALL`,
      )
    ).map((r) => r.name);
    assert.ok(epochViews.length >= 15, epochViews.join());
    for (const view of epochViews) {
      assert.deepEqual(
        await localPrint(file.con, `SELECT * FROM ${view}`),
        await remotePrint(`SELECT * FROM ${view} WHERE ${inWindow}`),
        `${view} over the window`,
      );
    }

    // Connections ended at epoch 24: nothing in the window refers to them.
    for (const table of ["hx.connection_ident", "hx.connection_opts"]) {
      assert.equal((await localPrint(file.con, `SELECT * FROM ${table}`)).n, 0, table);
    }
    assert.ok((await remotePrint("SELECT * FROM hx.connection_ident")).n > 0);
    // main.ips has no epoch column: the window does not cut it, so it holds every address,
    // even those last seen before the window (spec: db.backup.stream).
    const ips = await remotePrint("SELECT * FROM main.ips");
    assert.ok(ips.n > 0);
    assert.deepEqual(await localPrint(file.con, "SELECT * FROM main.ips"), ips);
    // ORDERS changed configuration at epoch 20: the window keeps only the row in force.
    const orders = `SELECT o.max_msgs FROM hx.stream_opts o JOIN hx.stream_ident i USING (stream_pk)
      WHERE i.name = 'ORDERS' ORDER BY o.epoch`;
    assert.deepEqual(await local(file.con, orders), [{ max_msgs: "5" }]);
    assert.equal((await sqlQuery(nc, SYSTEM, orders)).length, 2);
  });

  test("a window reaching back into the connections keeps just the connections it refers to, and both ORDERS configurations", async () => {
    const out = join(dir.path, "early.duckdb");
    const [start, end] = [epochAt(15), epochAt(22)];
    const run = await backup("--out", out, "--since", start, "--until", end);
    assert.equal(run.code, 0, run.stderr);
    await using file = await openBackup(out);
    const referenced = await sqlQuery<{ connection_pk: number }>(
      nc,
      SYSTEM,
      `SELECT DISTINCT connection_pk FROM hx.connection_stats
        WHERE epoch BETWEEN '${start}'::TIMESTAMPTZ AND '${end}'::TIMESTAMPTZ ORDER BY ALL`,
    );
    assert.ok(referenced.length > 0);
    assert.deepEqual(
      await local(file.con, "SELECT connection_pk FROM hx.connection_ident ORDER BY ALL"),
      referenced,
    );
    const orders = `SELECT o.max_msgs FROM hx.stream_opts o JOIN hx.stream_ident i USING (stream_pk)
      WHERE i.name = 'ORDERS' ORDER BY o.epoch`;
    assert.deepEqual(await local(file.con, orders), [{ max_msgs: "100000" }, { max_msgs: "5" }]);
  });

  test("db.backup.stream is exempt from db.query-stream.max-rows: a table a streamed query stops at 413 is backed up whole", async () => {
    const { n } = await remotePrint("SELECT * FROM hx.server_stats");
    assert.ok(n > STREAM_MAX_ROWS, `hx.server_stats has ${n} rows`);

    const backupStream = await readArrowStream(
      nc,
      subjects.dbBackupStream,
      { schema: "hx", table: "server_stats" },
      { timeoutMs: 30_000 },
    );
    let rows = 0;
    for await (const batch of backupStream) rows += batch.numRows;
    assert.equal(rows, n);
    assert.equal(backupStream.totals?.status, "end");
    assert.equal(backupStream.totals?.rows, n);

    await assert.rejects(
      async () => {
        const query = await readArrowStream(
          nc,
          subjects.dbQueryStream,
          { sql: "SELECT * FROM hx.server_stats" },
          { timeoutMs: 30_000 },
        );
        for await (const _ of query);
      },
      (err: unknown) =>
        err instanceof StreamFailedError &&
        err.code === 413 &&
        /more than 5 rows \(db\.query-stream\.max-rows\)/.test(err.message),
    );
  });

  test("db.backup.stream refuses hx.migrations, views, other tables and bad timestamps with an in-band 400 error trailer", async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ schema: "hx", table: "migrations" }, /hx\.migrations is not backed up.*hx\.server_stats/],
      [{ schema: "hx", table: "servers" }, /hx\.servers is not in the backup set.*natsmon db tables/],
      [{ schema: "checks", table: "server_001" }, /checks\.server_001 is not in the backup set/],
      [
        { schema: "hx", table: "server_stats", start_epoch: "yesterday" },
        /start_epoch must be an RFC 3339 timestamp/,
      ],
      [
        { schema: "hx", table: "server_stats", start_epoch: epochAt(5), end_epoch: epochAt(4) },
        /start_epoch .* is after end_epoch/,
      ],
      [{ table: "server_stats" }, /schema and table are required/],
    ];
    for (const [request, description] of cases) {
      const reply = await nc.request(subjects.dbBackupStream, JSON.stringify(request), { timeout: 10_000 });
      assert.equal(reply.headers?.get("Monitor-Stream"), "error", JSON.stringify(request));
      assert.equal(reply.headers?.get("Nats-Service-Error-Code"), "400", JSON.stringify(request));
      const trailer = reply.json<{ status: string; code: string; description: string }>();
      assert.equal(trailer.status, "error");
      assert.equal(trailer.code, "400");
      assert.match(trailer.description, description);
    }
  });

  test("an existing FILE is refused unless --force replaces it", async () => {
    const out = join(dir.path, "exists.duckdb");
    await writeFile(out, "keep me");
    const refused = await backup("--out", out, "--since", epochAt(48));
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /exists; choose another --out or add --force/);
    const forced = await backup("--out", out, "--since", epochAt(48), "--force");
    assert.equal(forced.code, 0, forced.stderr);
    await using file = await openBackup(out);
    assert.equal((await localPrint(file.con, "SELECT * FROM hx.epochs")).n, 2);
  });
});
