/**
 * meta-005 sums the stream and consumer replicas every server reports. A server holding some
 * of them freezes (SIGSTOP) across a scrape while the meta leader answers: the sum of that
 * epoch is short, and the finding must stay firing with its first start time, not resolve
 * and fire again with a new one (the audit on a live 2.9.10 cluster saw 7 such pairs in 9
 * minutes). Real 3-node cluster, natsmon run as a process.
 */
import assert from "node:assert/strict";
import { appendFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { sqlQuery } from "../harness/api-client.ts";
import { subscribeFindingFeed } from "../harness/finding-feed.ts";
import { spawnNatsmon, writeMonitorConfig } from "../harness/natsmon-process.ts";
import { startTestCluster } from "../harness/start-nats-cluster.ts";
import { APP_USER, SYS_USER } from "../harness/start-nats-server.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

const STREAMS = 24;

test("meta-005 stays firing with its first start while a server holding replicas is frozen across a scrape", async () => {
  // Tagged by name, so the R1 streams can be placed on a server that is not the meta leader:
  // left to placement, nats-server (under load) sometimes put every one on the leader.
  await using cluster = await startTestCluster({
    size: 3,
    nodeConfig: (name) => `server_tags: ["node:${name}"]`,
  });
  await cluster.waitForMeta();
  await using dir = await tempDir();
  const app = await connect({
    servers: cluster.urls.split(","),
    user: APP_USER.user,
    pass: APP_USER.password,
  });
  const sys = await connect({
    servers: cluster.urls.split(","),
    user: SYS_USER.user,
    pass: SYS_USER.password,
  });
  try {
    const leader = (await sys.request("$SYS.REQ.SERVER.PING.JSZ", "{}", { timeout: 5000 })).json<{
      data: { meta_cluster: { leader: string } };
    }>().data.meta_cluster.leader;
    // Every replica counted fires it; one short does not. The scrape goes through the meta
    // leader, so a frozen server is the only one missing from the epoch.
    const config = await writeMonitorConfig({
      path: join(dir.path, "natsmon.yaml"),
      dataDir: join(dir.path, "data"),
      system: "east",
      url: cluster.nodes.find((n) => n.name === leader)!.url,
      user: SYS_USER,
      scraper: "interval: 1s",
    });
    await appendFile(config, `\ncheck-thresholds: {meta-005: {p_max_assets: ${STREAMS - 1}}}\n`);
    await using node = spawnNatsmon(["run", "--config", config]);
    const bus = await connect({ servers: await node.waitForUrl(60_000) });
    try {
      const checked = async () =>
        (await sqlQuery<{ n: number }>(bus, "east", "SELECT count(*) AS n FROM hx.check_runs"))[0]!.n;
      await waitFor(
        () =>
          checked()
            .then((n) => n >= 1)
            .catch(() => false),
        { timeoutMs: 60_000, message: "a checked epoch" },
      );
      // The streams come after the first epoch, which sets the baseline and publishes nothing.
      const feed = subscribeFindingFeed(bus, "east");
      const jsm = await jetstreamManager(app, { timeout: 30_000 });
      const victimName = cluster.nodes.map((n) => n.name).find((name) => name !== leader)!;
      for (let i = 0; i < STREAMS; i++) {
        await jsm.streams.add({
          name: `R${i}`,
          subjects: [`r${i}.>`],
          num_replicas: 1,
          // Half on the server to freeze, half elsewhere: missing it drops the sum below the threshold.
          placement: { cluster: "c1", tags: [`node:${i % 2 === 0 ? victimName : leader}`] },
        });
      }
      const first = await feed.next((t) => t.code === "meta-005" && t.status === "firing", {
        timeoutMs: 60_000,
        message: "meta-005 firing",
      });
      const held = new Map<string, number>();
      for await (const si of jsm.streams.list()) {
        const host = si.cluster?.leader ?? "";
        held.set(host, (held.get(host) ?? 0) + 1);
      }
      assert.equal(held.get(victimName), STREAMS / 2, `${victimName} holds the streams placed on it`);
      const victim = cluster.nodes.find((n) => n.name === victimName)!;
      const missed = (since: string) =>
        sqlQuery<{ n: number }>(
          bus,
          "east",
          `SELECT count(*) AS n FROM hx.epochs e JOIN hx.check_runs r USING (epoch)
           WHERE e.epoch > '${since}'::TIMESTAMPTZ AND (NOT list_contains(e.servers_answered, '${victimName}')
             OR list_contains(coalesce(e.servers_partial, []), '${victimName}'))`,
        );
      const answered = (since: string) =>
        sqlQuery<{ n: number }>(
          bus,
          "east",
          `SELECT count(*) AS n FROM hx.epochs e JOIN hx.check_runs r USING (epoch)
           WHERE e.epoch > '${since}'::TIMESTAMPTZ AND list_contains(e.servers_answered, '${victimName}')
             AND NOT list_contains(coalesce(e.servers_partial, []), '${victimName}')`,
        );
      const frozenAt = new Date().toISOString();
      victim.pause();
      try {
        await waitFor(async () => ((await missed(frozenAt))[0]?.n ?? 0) >= 1, {
          timeoutMs: 60_000,
          message: `a checked epoch without ${victimName}`,
        });
      } finally {
        victim.resume();
      }
      const resumedAt = new Date().toISOString();
      await waitFor(async () => ((await answered(resumedAt))[0]?.n ?? 0) >= 2, {
        timeoutMs: 60_000,
        message: `two checked epochs with ${victimName} back`,
      });

      const transitions = feed.received
        .filter((r) => r.transition.code === "meta-005")
        .map((r) => `${r.transition.status} ${r.transition.starts_at}`);
      assert.deepEqual(transitions, [`firing ${first.transition.starts_at}`]);
      const firing = await sqlQuery<{ starts_at: string }>(
        bus,
        "east",
        "SELECT starts_at FROM hx.findings_firing WHERE code = 'meta-005'",
      );
      assert.deepEqual(
        firing.map((f) => new Date(f.starts_at).toISOString()),
        [new Date(first.transition.starts_at).toISOString()],
      );
    } finally {
      await bus.close();
    }
  } finally {
    await app.close();
    await sys.close();
  }
});
