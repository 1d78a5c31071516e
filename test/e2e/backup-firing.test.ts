/**
 * A backup's firing set (hx.findings_firing, which the grades read) is that of the file's
 * own last check run: a window backup does not carry the node's latest set, which the
 * window does not reach.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { connect } from "@nats-io/transport-node";
import { foldEpoch, openCatalog, runEpochChecks } from "../../src/catalog/index.ts";
import { sqlQuery } from "../harness/api-client.ts";
import { runNatsmon, spawnNatsmon } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";
import { labEpoch, TEST_DB } from "../integration/catalog/lab-epoch.ts";
import { backupArgs, epochAt, SYSTEM, writeCatalogNodeConfig } from "./backup-fixture.ts";

/** One check whose stream finding is a warning until epoch 3, critical from then on. */
const STATEMENT = {
  code: "jetstream-008",
  disabled: false,
  sql: `SELECT $1::TIMESTAMPTZ, 'jetstream-008', 'stream', 1::BIGINT, NULL::VARCHAR, 'ORDERS', 'n1',
          CASE WHEN $1::TIMESTAMPTZ < '${epochAt(3)}'::TIMESTAMPTZ THEN 'warning' ELSE 'critical' END, '{}'
        WHERE $2::TIMESTAMPTZ IS NOT NULL`,
};

test("a window backup's firing set is its last check run's, a full one the node's", async () => {
  await using dir = await tempDir();
  const data = join(dir.path, "data");
  await mkdir(data);
  {
    await using catalog = await openCatalog({ path: join(data, `${SYSTEM}.duckdb`), db: TEST_DB });
    for (let i = 0; i < 5; i++) {
      assert.equal((await foldEpoch(catalog, labEpoch(epochAt(i), i + 1))).status, "folded");
      assert.ok(await runEpochChecks(catalog, epochAt(i), [STATEMENT]));
    }
  }
  const config = await writeCatalogNodeConfig(join(dir.path, "node.yaml"), data);
  await using node = spawnNatsmon(["run", "--config", config]);
  const url = await node.waitForUrl();
  const nc = await connect({ servers: url });
  try {
    // The feed's baseline is seeded from the latest run (epoch 4), and recorded.
    await waitFor(async () => (await sqlQuery(nc, SYSTEM, "SELECT 1 FROM hx.findings_firing")).length === 1, {
      message: "the node to record its firing set",
    });
    const grade = "SELECT grade, critical, warning, held FROM hx.system_health";
    const firing = "SELECT baseline_epoch::VARCHAR AS at, severity FROM hx.findings_firing";
    const window = join(dir.path, "window.duckdb");
    const full = join(dir.path, "full.duckdb");
    for (const [out, args] of [
      [window, ["--since", epochAt(1), "--until", epochAt(2)]],
      [full, []],
    ] as const) {
      const run = await runNatsmon(backupArgs(url, "--out", out, ...args));
      assert.equal(run.code, 0, run.stderr);
    }
    const read = async (path: string, sql: string) => {
      const instance = await DuckDBInstance.create(path, { access_mode: "READ_ONLY" });
      try {
        const con = await instance.connect();
        await con.run("SET TimeZone = 'UTC'");
        return (await con.runAndReadAll(sql)).getRowObjectsJson();
      } finally {
        instance.closeSync();
      }
    };
    assert.deepEqual(await read(window, firing), [{ at: "2026-11-22 10:02:00+00", severity: "warning" }]);
    assert.deepEqual(await read(window, grade), [{ grade: "amber", critical: "0", warning: "1", held: "0" }]);
    assert.deepEqual(await read(full, firing), [{ at: "2026-11-22 10:04:00+00", severity: "critical" }]);
    assert.deepEqual(
      await read(full, grade),
      await sqlQuery(nc, SYSTEM, grade).then((rows) =>
        rows.map((r) => Object.fromEntries(Object.entries(r as object).map(([k, v]) => [k, String(v)]))),
      ),
    );
  } finally {
    await nc.close();
  }
});
