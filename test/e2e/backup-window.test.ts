import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { systemSubjects, type ScraperStatusReply } from "../../src/protocol/index.ts";
import { callApi, sqlQuery } from "../harness/api-client.ts";
import { spawnLocalNode } from "../harness/local-node.ts";
import { spawnNatsmon } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";
import { holdBackupConnection, rowCounts } from "./backup-fixture.ts";

const subjects = systemSubjects("local");

test("a window with no epoch when it is pinned is backed up empty in every table it cuts, though the node folds epochs into it meanwhile", async () => {
  await using dir = await tempDir("natsmon-backup-window-");
  // Streams wait for the held backup connection as long as the test needs.
  const local = await spawnLocalNode(dir.path, [
    "db: {query-timeout: 120s, query-stream: {ack-timeout: 120s}}",
  ]);
  await using node = local.node;
  const nc = local.nc;
  const url = await node.waitForUrl();
  try {
    await waitFor(
      async () =>
        (await sqlQuery<{ n: number }>(nc, "local", "SELECT count(*)::INTEGER AS n FROM hx.epochs"))[0]!.n >
          0 || undefined,
      {
        message: "the first epoch",
      },
    );
    // Paused, the node folds no epoch stamped after the pause: the window starting then has none.
    const paused = await callApi<ScraperStatusReply>(nc, subjects.opsScraperToggle, { paused: true });
    assert.equal(paused.state, "paused");
    const since = new Date().toISOString();
    const until = new Date(Date.now() + 3_600_000).toISOString();

    // The backup plans, then waits at the node for its first table while the held stream
    // keeps the backup connection; meanwhile the scraper resumes and epochs land in the window.
    const held = await holdBackupConnection(nc, subjects.dbBackupStream);
    const out = join(dir.path, "future.duckdb");
    const run = spawnNatsmon([
      "backup",
      "--server",
      url,
      "--system",
      "local",
      "--out",
      out,
      "--since",
      since,
      "--until",
      until,
    ]);
    try {
      await waitFor(
        async () =>
          (await callApi<{ pools: { backup: { waiting: number } } }>(nc, subjects.opsStorage)).pools.backup
            .waiting > 0 || undefined,
        { timeoutMs: 60_000, message: "the backup to wait at the node for a table" },
      );
      assert.match(run.stderr(), /backing up system local: \d+ tables, 0 epochs/);
      await callApi<ScraperStatusReply>(nc, subjects.opsScraperToggle, {});
      await waitFor(
        async () =>
          (
            await sqlQuery<{ n: number }>(
              nc,
              "local",
              `SELECT count(*)::INTEGER AS n FROM hx.epochs WHERE epoch >= '${since}'::TIMESTAMPTZ`,
            )
          )[0]!.n > 1 || undefined,
        { message: "epochs folded into the window during the backup" },
      );
    } finally {
      await held.release();
    }
    assert.equal(await run.exited, 0, run.stderr());

    assert.match(
      run.stderr(),
      /no epoch was folded in the window when it was pinned: the \d+ tables it cuts are backed up empty/,
    );
    assert.match(run.stderr(), /hx\.server_stats: 0 rows, not asked \(no epoch in the window\)/);
    assert.match(run.stdout(), /\d+ tables \(\d+ empty: no epoch in the window\)/);
    const counts = await rowCounts(out);
    assert.ok(counts.has("hx.server_stats") && counts.has("hx.server_ident") && counts.has("main.ips"));
    const filled = [...counts].filter(([table, n]) => table.startsWith("hx.") && n > 0);
    assert.deepEqual(filled, [], "every hx table is cut by the window, and the window held no epoch");
  } finally {
    await nc.close();
  }
});
