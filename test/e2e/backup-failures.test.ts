/**
 * natsmon backup when things go wrong: no node serves the system, a date it cannot use, a
 * node that never answers, a signal midway, a view that cannot be recreated. Each exits
 * with its code and message and leaves neither FILE nor its temporary file. The happy
 * paths are in backup.test.ts.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import type { NatsConnection } from "@nats-io/nats-core";
import { systemSubjects } from "../../src/protocol/index.ts";
import { callApi } from "../harness/api-client.ts";
import { runNatsmon, spawnNatsmon, type NatsmonProcess } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";
import {
  backupArgs,
  buildLabCatalog,
  epochAt,
  holdBackupConnection as holdBackupConnectionOf,
  startLabNode,
  SYSTEM,
  writeCatalogNodeConfig,
  type LabNode,
} from "./backup-fixture.ts";

const subjects = systemSubjects(SYSTEM);
/** Enough epochs for a backup to have tables to stream; these tests are about how it ends. */
const EPOCHS = 5;

describe("natsmon backup that cannot finish fails cleanly", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let url: string;
  let nc: NatsConnection;
  const backup = (...args: string[]) => runNatsmon(backupArgs(url, ...args));

  let lab: LabNode | undefined;
  before(async () => {
    // Long timeouts: the interruption tests hold the backup connection with a stream they never ack.
    lab = await startLabNode("natsmon-backup-fail-", {
      epochs: EPOCHS,
      dbYaml: "query-timeout: 120s, query-stream: {ack-timeout: 120s}",
    });
    ({ dir, url, nc } = lab);
  });

  after(async () => {
    await lab?.[Symbol.asyncDispose]();
  });

  test("a backup of a system no catalog serves fails with a hint and writes nothing", async () => {
    const out = join(dir.path, "nobody.duckdb");
    const run = await runNatsmon(["backup", "--server", url, "--system", "nobody", "--out", out]);
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      /no node serves system "nobody" \(.*db\.query has no responder\); `natsmon systems` lists the systems on this bus/,
    );
    assert.deepEqual(await readdir(dir.path).then((names) => names.filter((n) => n.includes("nobody"))), []);
  });

  test("a --since in the future without --until, or a date that does not exist, is refused before anything is written", async () => {
    const cases: [string[], RegExp][] = [
      [["--since", "2099-01-01T00:00:00Z"], /--since \(2099-01-01T00:00:00Z\) is in the future/],
      [
        ["--until", "2026-02-30T00:00:00Z"],
        /--until 2026-02-30T00:00:00Z is not a real date and time: 2026-02 has 28 days/,
      ],
      [
        ["--since", "2026-11-22T10:61:00Z"],
        /--since 2026-11-22T10:61:00Z is not a real date and time: there is no minute 61/,
      ],
    ];
    for (const [args, message] of cases) {
      const run = await backup("--out", join(dir.path, "refused.duckdb"), ...args);
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, message);
      assert.doesNotMatch(run.stderr, /start_epoch|end_epoch/);
    }
    assert.deepEqual(await partials("refused"), []);
  });

  /**
   * A peer that takes the planning requests (db.query) of system `silent` and never answers,
   * as a node would whose catalog is stuck; returns how many it has taken.
   */
  function silentCatalog(): { requests: () => number } & Disposable {
    let requests = 0;
    const sub = nc.subscribe(systemSubjects("silent").dbQuery, { callback: () => void requests++ });
    return { requests: () => requests, [Symbol.dispose]: () => sub.unsubscribe() };
  }
  /** `natsmon backup` of system `silent` into `out` (in the test's folder). */
  const silentBackup = (out: string, timeoutMs: number) => [
    "backup",
    "--server",
    url,
    "--system",
    "silent",
    "--out",
    join(dir.path, out),
    "--timeout",
    String(timeoutMs),
  ];

  // The planning requests once waited 60 s whatever --timeout said: a test timeout under
  // that catches a Ctrl-C left waiting for them.
  test(
    "Ctrl-C while the backup is still planning exits 130 at once and writes nothing",
    { timeout: 45_000 },
    async () => {
      using silent = silentCatalog();
      await nc.flush();
      const out = "planning.duckdb";
      const run = spawnNatsmon(silentBackup(out, 600_000));
      await waitFor(() => silent.requests() > 0 || undefined, {
        timeoutMs: 30_000,
        message: "the backup's first planning request",
      });
      assert.equal(await run.kill("SIGINT"), 130);
      assert.match(run.stderr(), /interrupted by SIGINT; no backup written/);
      assert.doesNotMatch(run.stderr(), /backing up system/);
      assert.deepEqual(await partials(out), []);
    },
  );

  test("a planning request unanswered within --timeout fails the backup, naming the subject and the limit", async () => {
    using silent = silentCatalog();
    await nc.flush();
    const run = await runNatsmon(silentBackup("unplanned.duckdb", 1500));
    assert.equal(run.code, 1, run.stderr);
    const subject = systemSubjects("silent").dbQuery.replaceAll(".", "\\.").replaceAll("$", "\\$");
    assert.match(
      run.stderr,
      new RegExp(`backup failed, no backup written: no answer from ${subject} within 1500 ms`),
    );
    assert.equal(silent.requests(), 1);
    assert.deepEqual(await partials("unplanned"), []);
  });

  const holdBackupConnection = () => holdBackupConnectionOf(nc, subjects.dbBackupStream);

  /** Requests waiting at the node for its backup connection (ops.storage). */
  const backupWaiting = async () =>
    (await callApi<{ pools: { backup: { waiting: number } } }>(nc, subjects.opsStorage)).pools.backup.waiting;

  const partials = async (prefix: string) => (await readdir(dir.path)).filter((n) => n.includes(prefix));

  // SIGHUP: the terminal the backup was started in closed.
  for (const [signal, code] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
    ["SIGHUP", 129],
  ] as const) {
    test(`a backup interrupted with ${signal} exits ${code} and leaves neither FILE nor its temporary file`, async () => {
      const held = await holdBackupConnection();
      const out = `cut-${signal}.duckdb`;
      try {
        const run = spawnNatsmon(
          backupArgs(
            url,
            "--out",
            join(dir.path, out),
            // Far longer than the test's own timeout: the process must not wait for it to run out.
            "--timeout",
            "600000",
          ),
        );
        // The temporary file exists once the schema is being written; the first table's
        // request then waits at the node for the held connection, and the CLI for its answer.
        await waitFor(async () => (await partials(out)).length > 0 || undefined, {
          timeoutMs: 30_000,
          message: "the temporary backup file",
        });
        await waitFor(async () => (await backupWaiting()) > 0 || undefined, {
          timeoutMs: 30_000,
          message: "the backup's first table to wait at the node",
        });
        assert.equal(await run.kill(signal), code);
        assert.match(run.stderr(), /backing up system lab: \d+ tables/);
        assert.match(run.stderr(), new RegExp(`interrupted by ${signal}; no backup written`));
        assert.deepEqual(await partials(out), []);
      } finally {
        await held.release();
      }
    });
  }

  test("a backup that fails midway (no answer within --timeout) exits 1 and leaves no temporary file", async () => {
    const held = await holdBackupConnection();
    try {
      const run = await backup("--out", join(dir.path, "failed.duckdb"), "--timeout", "1500");
      assert.equal(run.code, 1);
      assert.match(run.stderr, /backup failed, no backup written/);
      assert.deepEqual(await partials("failed.duckdb"), []);
    } finally {
      await held.release();
    }
    // The node serves backups again once the held stream is cancelled.
    const after = await backup("--out", join(dir.path, "after.duckdb"), "--since", epochAt(EPOCHS - 1));
    assert.equal(after.code, 0, after.stderr);
  });
});

describe("natsmon backup of a catalog holding a view the backup cannot recreate", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let node: NatsmonProcess;
  let url: string;

  before(async () => {
    dir = await tempDir("natsmon-backup-view-");
    const data = join(dir.path, "data");
    await buildLabCatalog(data, 2);
    // A view over hx.migrations, which is not backed up: its definition cannot be run in
    // the backup, as any view over a table outside the backup set could not.
    const instance = await DuckDBInstance.create(join(data, `${SYSTEM}.duckdb`));
    try {
      const con = await instance.connect();
      await con.run("CREATE VIEW hx.schema_version AS SELECT max(version) AS version FROM hx.migrations");
      con.closeSync();
    } finally {
      instance.closeSync();
    }
    node = spawnNatsmon(["run", "--config", await writeCatalogNodeConfig(join(dir.path, "node.yaml"), data)]);
    url = await node.waitForUrl();
  });

  after(async () => {
    await node?.[Symbol.asyncDispose]();
    await dir?.[Symbol.asyncDispose]();
  });

  test("the backup fails naming the view and DuckDB's reason, and leaves no file", async () => {
    const out = join(dir.path, "views.duckdb");
    const run = await runNatsmon(backupArgs(url, "--out", out));
    assert.equal(run.code, 1, run.stderr);
    assert.match(
      run.stderr,
      /backup failed, no backup written: view hx\.schema_version cannot be recreated: .*migrations/,
    );
    // Every table was copied before the views were made: only the view stood in the way.
    assert.match(run.stderr, /\[\s*\d+\/\d+\] main\.ips: /);
    assert.deepEqual(
      (await readdir(dir.path)).filter((n) => n.includes("views")),
      [],
    );
  });
});
