/**
 * db.retention holds while nothing folds: a catalog-only node over a catalog whose system
 * sends no epochs (its scraper stopped, or the system unreachable) drops what is past
 * retention when the catalog opens, then on its round (once a minute; shortened here).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import { foldEpoch, openCatalog } from "../../src/catalog/index.ts";
import { sqlQuery } from "../harness/api-client.ts";
import { spawnNatsmon } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";
import { labEpoch, TEST_DB } from "../integration/catalog/lab-epoch.ts";

test("retention removes epochs past db.retention with no fold: at open, then on its round", async () => {
  await using dir = await tempDir();
  const data = join(dir.path, "data");
  await mkdir(data);
  // Two hours old, just inside the hour of retention (out of it some seconds after start:
  // enough for a node starting on a loaded machine to open its catalog first), recent.
  const inside = 15_000;
  const now = Math.floor(Date.now() / 1000) * 1000;
  const epochs = [now - 2 * 3_600_000, now - 3_600_000 + inside, now - 60_000].map((ms) => new Date(ms));
  {
    await using catalog = await openCatalog({ path: join(data, "idle.duckdb"), db: TEST_DB });
    for (const [i, epoch] of epochs.entries()) {
      assert.equal((await foldEpoch(catalog, labEpoch(epoch.toISOString(), i + 1))).status, "folded");
    }
  }
  const config = join(dir.path, "natsmon.yaml");
  await writeFile(
    config,
    [
      `node: {data-dir: ${JSON.stringify(data)}}`,
      "sink: {embedded: {port: -1}}",
      // Catalog only: nothing scrapes, so no epoch is folded while the test runs.
      "system: {id: idle, roles: [catalog]}",
      "db: {retention: 1h}",
    ].join("\n"),
  );
  await using node = spawnNatsmon(["run", "--config", config], { NATSMON_RETENTION_EVERY_MS: "500" });
  const nc = await connect({ servers: await node.waitForUrl() });
  try {
    const held = async () =>
      (await sqlQuery<{ epoch: string }>(nc, "idle", "SELECT epoch FROM hx.epochs ORDER BY epoch")).map((r) =>
        Date.parse(r.epoch),
      );
    await waitFor(async () => (await held()).length === 2, {
      message: "the two-hour-old epoch to be removed once the catalog opened",
    });
    assert.deepEqual(await held(), [epochs[1]!.getTime(), epochs[2]!.getTime()]);
    await waitFor(async () => (await held()).length === 1, {
      timeoutMs: inside + 20_000,
      message: "the epoch that aged past retention to be removed on retention's round",
    });
    assert.deepEqual(await held(), [epochs[2]!.getTime()]);
    const stats = await sqlQuery<{ n: number }>(
      nc,
      "idle",
      "SELECT count(DISTINCT epoch)::INTEGER AS n FROM hx.server_stats",
    );
    assert.deepEqual(stats, [{ n: 1 }], "the epochs' rows went with them");
  } finally {
    await nc.close();
  }
});
