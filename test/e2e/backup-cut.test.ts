/**
 * `natsmon backup` copies each table with its own db.backup.stream request while the node
 * goes on. Here the catalog is served in this process (the real API on a real nats-server,
 * over a real DuckDB file), so that something can happen to it at a chosen point of the
 * copy: retention, or an epoch folded late. The backup must come out as one cut, equal
 * table by table to a backup taken with nothing happening.
 */
import { after, before, describe, test } from "node:test";
import { copyFile, mkdir } from "node:fs/promises";
import assert from "node:assert/strict";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import { DuckDBInstance } from "@duckdb/node-api";
import {
  dbBackupStreamHandler,
  dbQueryHandler,
  startApi,
  type BackupStreamPort,
} from "../../src/api/index.ts";
import {
  applyRetention,
  backupStatementFor,
  foldEpoch,
  openArrowScan,
  openCatalog,
  runReadOnlyQuery,
  type Catalog,
} from "../../src/catalog/index.ts";
import { silentLogger } from "../../src/lib/index.ts";
import { startTestServer } from "../harness/start-nats-server.ts";
import { runNatsmon } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { changingLabReplies, marker, TEST_DB } from "../integration/catalog/lab-epoch.ts";
import { backupArgs, buildLabCatalog, EPOCHS, epochAt, SYSTEM } from "./backup-fixture.ts";

const DB = {
  ...TEST_DB,
  queryMaxRows: 100_000,
  queryStream: { maxRows: 0, window: 4, compression: "none" as const, ackTimeoutMs: 30_000 },
};

/**
 * A lab catalog served in process; once armed, `trigger.run` runs once, when the backup
 * stream of `trigger.table` is next asked for, before its scan starts.
 */
async function servedLab(dir: string, trigger: { table: string; run: (catalog: Catalog) => Promise<void> }) {
  const data = join(dir, "data");
  await mkdir(data);
  await copyFile(labFile(), join(data, `${SYSTEM}.duckdb`));
  const catalog = await openCatalog({ path: join(data, `${SYSTEM}.duckdb`), db: DB });
  const server = await startTestServer();
  const serviceNc = await connect({ servers: server.url });
  const api = await startApi(serviceNc, {
    nodeId: "n1",
    discovery: () => ({ node_id: "n1", version: "0", capabilities: {}, systems: [] }),
    log: silentLogger(),
  });
  let armed = false;
  let fired = false;
  const backupStream: BackupStreamPort = {
    limits: DB.queryStream,
    open: async (request, signal) => {
      if (armed && request.table === trigger.table && !fired) {
        fired = true;
        await trigger.run(catalog);
      }
      const statement = await backupStatementFor(catalog, request, signal);
      return openArrowScan(
        catalog,
        { sql: statement.sql, params: [...statement.params] },
        { pool: "backup", trusted: true, signal, stepTimeoutMs: DB.queryTimeoutMs },
      );
    },
  };
  await api.addSystemEndpoints(SYSTEM, {
    "db.query": dbQueryHandler({
      query: (request, format) =>
        runReadOnlyQuery(catalog, request, {
          maxRows: DB.queryMaxRows,
          timeoutMs: DB.queryTimeoutMs,
          format,
        }),
    }),
    "db.backup.stream": dbBackupStreamHandler(backupStream),
  });
  return {
    url: server.url,
    arm: () => {
      armed = true;
    },
    fired: () => fired,
    async [Symbol.asyncDispose]() {
      await api[Symbol.asyncDispose]();
      await serviceNc.close();
      await catalog[Symbol.asyncDispose]();
      await server[Symbol.asyncDispose]();
    },
  };
}

async function backup(url: string, out: string): Promise<string> {
  const run = await runNatsmon(backupArgs(url, "--out", out));
  assert.equal(run.code, 0, run.stderr);
  return run.stderr;
}

/**
 * The tables whose rows differ between two backup files (rows in one and not the other,
 * duplicates counted), with the count of each side; empty when they hold the same rows.
 */
async function differences(a: string, b: string): Promise<string[]> {
  const instance = await DuckDBInstance.create(":memory:");
  const con = await instance.connect();
  try {
    await con.run(`ATTACH '${a}' AS a (READ_ONLY); ATTACH '${b}' AS b (READ_ONLY)`);
    const tables = (
      await con.runAndReadAll(
        "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = 'a' ORDER BY ALL",
      )
    ).getRowsJS() as [string, string][];
    assert.ok(tables.length > 30, `a backup of the lab catalog has its tables (${tables.length})`);
    const found: string[] = [];
    for (const [schema, table] of tables) {
      const [[onlyA, onlyB, rowsA, rowsB]] = (
        await con.runAndReadAll(
          `SELECT (SELECT count(*) FROM (FROM a.${schema}.${table} EXCEPT ALL FROM b.${schema}.${table}))::INTEGER,
                  (SELECT count(*) FROM (FROM b.${schema}.${table} EXCEPT ALL FROM a.${schema}.${table}))::INTEGER,
                  (SELECT count(*) FROM a.${schema}.${table})::INTEGER,
                  (SELECT count(*) FROM b.${schema}.${table})::INTEGER`,
        )
      ).getRowsJS() as [[number, number, number, number]];
      if (onlyA + onlyB > 0) found.push(`${schema}.${table}: ${rowsA} rows against ${rowsB}`);
    }
    return found;
  } finally {
    con.closeSync();
    instance.closeSync();
  }
}

async function epochsIn(path: string): Promise<number> {
  const instance = await DuckDBInstance.create(path, { access_mode: "READ_ONLY" });
  try {
    const con = await instance.connect();
    const [[n]] = (await con.runAndReadAll("SELECT count(*)::INTEGER FROM hx.epochs")).getRowsJS() as [
      [number],
    ];
    con.closeSync();
    return n;
  } finally {
    instance.closeSync();
  }
}

// One lab catalog, built once; each test serves a copy of it.
let built: Awaited<ReturnType<typeof tempDir>> | undefined;
const labFile = () => join(built!.path, `${SYSTEM}.duckdb`);
before(async () => {
  built = await tempDir("natsmon-backup-cut-lab-");
  await buildLabCatalog(built.path);
});
after(() => built?.[Symbol.asyncDispose]());

// hx tables are copied in name order: connection_stats before hx.epochs, server_stats after it.
for (const table of ["connection_stats", "server_stats"]) {
  describe(`with the copy reaching hx.${table}`, () => {
    test("retention that runs on the node during a backup leaves every table of it, as on the node", async () => {
      await using dir = await tempDir("natsmon-backup-cut-");
      // Epochs 0–29 go, and with them the client connections, which end at epoch 24.
      await using lab = await servedLab(dir.path, {
        table,
        run: async (catalog) => {
          const removed = await applyRetention(catalog, new Date(epochAt(30)));
          assert.equal(removed.epochs, 30);
          assert.ok(removed.identities > 0 && removed.ips > 0, JSON.stringify(removed));
        },
      });
      const during = join(dir.path, "during.duckdb");
      lab.arm();
      const stderr = await backup(lab.url, during);
      assert.ok(lab.fired(), "retention ran during the backup");
      assert.match(stderr, /retention ran on the node during the backup/);
      // Taken afterwards, with nothing happening: the node as retention left it.
      const after = join(dir.path, "after.duckdb");
      await backup(lab.url, after);
      assert.deepEqual(await differences(during, after), []);
      assert.equal(await epochsIn(during), EPOCHS - 30);
    });

    test("an epoch folded during a backup with a start time inside its window is left out of every table", async () => {
      await using dir = await tempDir("natsmon-backup-cut-");
      await using lab = await servedLab(dir.path, {
        table,
        run: async (catalog) => {
          // Stamped between epochs 20 and 21, folded last (a scraper whose clock lags): with
          // client connections, and ORDERS as it was before epoch 20's edit, a new _opts row.
          const replies = changingLabReplies(20, { connzUntil: 25, ordersEditFrom: EPOCHS });
          const late = new Date(Date.parse(epochAt(20)) + 30_000).toISOString();
          const result = await foldEpoch(catalog, {
            markerSeq: EPOCHS + 1,
            marker: marker(late, replies),
            replies,
          });
          assert.equal(result.status, "folded");
        },
      });
      // Taken first, with nothing happening: the catalog when the window was pinned.
      const before = join(dir.path, "before.duckdb");
      await backup(lab.url, before);
      const during = join(dir.path, "during.duckdb");
      lab.arm();
      const stderr = await backup(lab.url, during);
      assert.ok(lab.fired(), "the late epoch was folded during the second backup");
      assert.match(stderr, /1 epochs were folded during the backup with start times inside the window/);
      assert.deepEqual(await differences(during, before), []);
      assert.equal(await epochsIn(during), EPOCHS);
    });
  });
}
