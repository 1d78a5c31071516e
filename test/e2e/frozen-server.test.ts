/**
 * The server natsmon's scrape connection goes through freezes (SIGSTOP: a hung process, a
 * host swapping, a half-open network): no server answers until the connection moves on.
 * natsmon moves it after the first such epoch, and scrape-001 fires for the frozen server
 * only, not for every server it could not hear through it. Real 3-node cluster.
 */
import assert from "node:assert/strict";
import { appendFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { connect } from "@nats-io/transport-node";
import { sqlQuery } from "../harness/api-client.ts";
import { subscribeFindingFeed } from "../harness/finding-feed.ts";
import { spawnNatsmon, writeMonitorConfig } from "../harness/natsmon-process.ts";
import { startTestCluster } from "../harness/start-nats-cluster.ts";
import { SYS_USER } from "../harness/start-nats-server.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

test("a frozen server raises scrape-001 for itself only", async () => {
  await using cluster = await startTestCluster();
  await using dir = await tempDir();
  const n1 = cluster.nodes[0]!;
  // The scrape connection goes to n1 (the other servers are discovered from it).
  const config = await writeMonitorConfig({
    path: join(dir.path, "natsmon.yaml"),
    dataDir: join(dir.path, "data"),
    system: "east",
    url: n1.url,
    user: SYS_USER,
    scraper: "interval: 2s",
  });
  // A grace well past how long the client takes to move off a frozen server (about 20 s
  // here), so a slow machine does not decide the outcome.
  await appendFile(config, "\ncheck-thresholds: {scrape-001: {p_blind_grace_s: 120}}\n");
  await using node = spawnNatsmon(["run", "--config", config]);
  const bus = await connect({ servers: await node.waitForUrl() });
  try {
    const checked = async () =>
      (await sqlQuery<{ n: number }>(bus, "east", "SELECT count(*) AS n FROM hx.check_runs"))[0]!.n;
    await waitFor(
      () =>
        checked()
          .then((n) => n >= 3)
          .catch(() => false),
      {
        timeoutMs: 60_000,
        message: "3 checked epochs",
      },
    );
    const feed = subscribeFindingFeed(bus, "east");
    n1.pause();
    try {
      await feed.next((t) => t.code === "scrape-001" && t.entity_name === "n1" && t.status === "firing", {
        timeoutMs: 60_000,
      });
      const start = await checked();
      await waitFor(async () => (await checked()) >= start + 4, {
        timeoutMs: 60_000,
        message: "4 more epochs",
      });
    } finally {
      n1.resume();
    }
    const fired = feed.received
      .filter((r) => r.transition.status === "firing" && r.transition.code === "scrape-001")
      .map((r) => r.transition.entity_name);
    assert.deepEqual(fired, ["n1"], "only the frozen server did not answer");
  } finally {
    await bus.close();
  }
});
