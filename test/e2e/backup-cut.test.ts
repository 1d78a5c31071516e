/**
 * `natsmon backup` copies each table with its own db.backup.stream request while the node
 * goes on. Here the catalog is served in this process (the real API on a real nats-server,
 * over a real DuckDB file), so that something can happen to it at a chosen point of the
 * copy: retention, or an epoch folded late. The backup must come out as one cut, equal
 * table by table to a backup taken with nothing happening.
 */
import { after, before, describe, test } from "node:test";
import { access, copyFile, mkdir } from "node:fs/promises";
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
import type { ScrapeReply } from "../../src/catalog/index.ts";
import { changingLabReplies, editReply, marker, TEST_DB } from "../integration/catalog/lab-epoch.ts";
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

async function backup(url: string, out: string, ...args: string[]): Promise<string> {
  const run = await runNatsmon(backupArgs(url, "--out", out, ...args));
  assert.equal(run.code, 0, run.stderr);
  return run.stderr;
}

/**
 * The tables whose rows differ between two backup files (rows in one and not the other,
 * duplicates counted), with the count of each side; empty when they hold the same rows.
 */
async function differences(a: string, b: string, except: readonly string[] = []): Promise<string[]> {
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
      if (except.includes(`${schema}.${table}`)) continue;
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
      assert.match(stderr, /1 epochs stamped at or before the window's end were folded during the backup/);
      assert.deepEqual(await differences(during, before), []);
      assert.equal(await epochsIn(during), EPOCHS);
    });
  });
}

/** Epoch `i`'s lab replies with ORDERS as it was before epoch 20's edit, and no client connections. */
const ordersUnedited = (i: number) => changingLabReplies(i, { connzUntil: 0, ordersEditFrom: EPOCHS });

/** Epoch `i`'s lab replies with one client connection and one stream never seen before. */
function withNewcomers(i: number): ScrapeReply[] {
  const replies = editReply(
    "connz",
    "n1",
    (body) => {
      const data = (
        body as unknown as { data: { connections: Record<string, unknown>[]; num_connections: number } }
      ).data;
      data.connections.push({ ...data.connections[0]!, cid: 9001, ip: "10.9.9.1", port: 50001, name: "new" });
      data.num_connections += 1;
      return body;
    },
    changingLabReplies(i, { connzUntil: 25, ordersEditFrom: 20 }),
  );
  return editReply(
    "jsz",
    "n2",
    (body) => {
      const streams = body.data.account_details[0]!.stream_detail;
      const orders = structuredClone(streams.find((d) => d.name === "ORDERS")!);
      streams.push({ ...orders, name: "NEWCOMER", config: { ...orders.config, name: "NEWCOMER" } });
      return body;
    },
    replies,
  );
}

const lateFold = (at: string, replies: ScrapeReply[]) => async (catalog: Catalog) => {
  const result = await foldEpoch(catalog, { markerSeq: EPOCHS + 1, marker: marker(at, replies), replies });
  assert.equal(result.status, "folded");
};
const secondsAfter = (i: number, s: number) => new Date(Date.parse(epochAt(i)) + s * 1000).toISOString();

describe("late epochs at the edges of the window", () => {
  // hx.stream_opts is copied after hx.server_stats: a late ORDERS row reaches it.
  const table = "server_stats";

  /** A backup with `args` before the late fold and one during it; answers the second's stderr. */
  async function beforeAndDuring(dir: string, run: (catalog: Catalog) => Promise<void>, args: string[]) {
    const lab = await servedLab(dir, { table, run });
    const before = join(dir, "before.duckdb");
    await backup(lab.url, before, ...args);
    lab.arm();
    const during = join(dir, "during.duckdb");
    const run2 = await runNatsmon(backupArgs(lab.url, "--out", during, ...args));
    assert.ok(lab.fired(), "the late epoch was folded during the second backup");
    return { lab, before, during, run: run2 };
  }

  test("one stamped between --since and the window's first epoch leaves its _opts row out too", async () => {
    await using dir = await tempDir("natsmon-backup-cut-");
    const { lab, before, during, run } = await beforeAndDuring(
      dir.path,
      lateFold(secondsAfter(24, 30), ordersUnedited(24)),
      ["--since", secondsAfter(24, 10)],
    );
    await using _ = lab;
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /1 epochs stamped at or before the window's end were folded/);
    assert.deepEqual(await differences(during, before), []);
  });

  test("one stamped before the oldest epoch, with no window, leaves its _opts row out too", async () => {
    await using dir = await tempDir("natsmon-backup-cut-");
    const { lab, before, during, run } = await beforeAndDuring(
      dir.path,
      lateFold(secondsAfter(0, -30), ordersUnedited(0)),
      [],
    );
    await using _ = lab;
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(await differences(during, before), []);
  });

  test("one that brings new identities takes them out of every hx table; main.ips keeps its new address", async () => {
    await using dir = await tempDir("natsmon-backup-cut-");
    const { lab, before, during, run } = await beforeAndDuring(
      dir.path,
      lateFold(secondsAfter(20, 30), withNewcomers(20)),
      [],
    );
    await using _ = lab;
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      run.stderr,
      /_ident and _opts rows that only the epochs left out referred to went with them/,
    );
    assert.deepEqual(await differences(during, before, ["main.ips"]), []);
    // main.ips is copied whole, as of its own request (README: Backup).
    assert.deepEqual(await differences(during, before), ["main.ips: 2 rows against 1"]);
  });

  test("one stamped before --since whose _opts row became the one in force at the start fails the backup", async () => {
    await using dir = await tempDir("natsmon-backup-cut-");
    const since = epochAt(25);
    const { lab, during, run } = await beforeAndDuring(
      dir.path,
      lateFold(secondsAfter(22, 30), ordersUnedited(22)),
      ["--since", since],
    );
    await using _ = lab;
    assert.equal(run.code, 1, run.stderr);
    assert.match(
      run.stderr,
      new RegExp(
        `backup failed, no backup written: an epoch stamped ${secondsAfter(22, 30).replace(".000Z", "")}.*` +
          `before the window's start ${since.replace(".000Z", "")}.*hx\\.stream_opts row became the one in force.*run the backup again`,
      ),
    );
    await assert.rejects(access(during));
  });
});
