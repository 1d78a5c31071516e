/**
 * Which servers an epoch expects, against a real 3-node JetStream cluster with one node
 * stopped: a server not heard from for scraper.forget-after is forgotten, unless the
 * JetStream meta group still names it as a peer (a stopped cluster member: scrape-001
 * keeps firing for it until it is back or peer-removed), also once the group has lost its
 * leader and the scraper restarted.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { connect } from "@nats-io/transport-node";
import { expectedSeed, SOURCES } from "../../../src/scrape/index.ts";
import { startTestCluster } from "../../harness/start-nats-cluster.ts";
import { SYS_USER } from "../../harness/start-nats-server.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { scrapeOneEpoch } from "../catalog/live-scrape.ts";

test("a server quiet past forget-after is no longer expected; a stopped meta peer stays expected", async () => {
  await using cluster = await startTestCluster({ size: 3 });
  const n3 = cluster.nodes.find((n) => n.name === "n3")!;
  await n3.stop();
  const sys = await connect({
    servers: cluster.nodes.filter((n) => n !== n3).map((n) => n.url),
    user: SYS_USER.user,
    pass: SYS_USER.password,
  });
  try {
    const hourAgo = Date.now() - 3_600_000;
    // "old-id" stands for a server without a configured name, named after its id by
    // nats-server, so gone for good once it restarted: both quiet for an hour.
    const seed = {
      servers: ["n1", "n2", "n3", "old-id"],
      unheardSince: new Map([
        ["n3", hourAgo],
        ["old-id", hourAgo],
      ]),
      since: Date.now(),
      metaPeers: new Map<string, string[]>(),
    };
    const { marker, summary } = await waitFor(
      async () => {
        const scraped = await scrapeOneEpoch(sys, SOURCES, { expected: seed, forgetAfterMs: 60_000 });
        // The meta group needs a leader to name its peers, and forgetting waits for a view of
        // the whole group; n3's stop may be sinking in.
        return scraped.marker.servers_answered.length === 2 &&
          scraped.marker.servers_expected.includes("n3") &&
          !scraped.marker.servers_expected.includes("old-id")
          ? scraped
          : undefined;
      },
      { message: "an epoch answered by n1 and n2 whose meta group names n3, old-id forgotten" },
    );
    assert.deepEqual(marker.servers_answered, ["n1", "n2"]);
    assert.deepEqual(marker.servers_expected, ["n1", "n2", "n3"], "old-id is forgotten, n3 a meta peer");
    assert.deepEqual(Object.keys(marker.servers_unheard_since ?? {}), ["n3"]);
    // n3 counts from its last answer, moved on by the moments between the seed and the epoch.
    assert.equal(
      Date.parse(marker.servers_unheard_since!.n3!),
      hourAgo + Date.parse(marker.epoch) - seed.since,
    );
    // What ops.scraper.status reports of the last epoch.
    assert.deepEqual(summary.serversUnheardSince, marker.servers_unheard_since);

    // With forgetting off, both stay expected.
    const { marker: kept } = await scrapeOneEpoch(sys, SOURCES, { expected: seed, forgetAfterMs: 0 });
    assert.deepEqual(kept.servers_expected, ["n1", "n2", "n3", "old-id"]);
  } finally {
    await sys.close();
  }
});

test("stopped meta peers stay expected when the group has no leader, also after the scraper restarted", async () => {
  await using cluster = await startTestCluster({ size: 3 });
  await cluster.waitForMeta();
  const all = await connect({
    servers: cluster.urls.split(","),
    user: SYS_USER.user,
    pass: SYS_USER.password,
  });
  const { marker: before, replies } = await scrapeOneEpoch(all, SOURCES, { forgetAfterMs: 60_000 });
  await all.close();
  assert.deepEqual(before.meta_peers, { "": ["n1", "n2", "n3"] }, "the leader listed the group");
  // The leader and one more stop: the survivor has no leader and lists no peers.
  const leader = replies.find(
    (r) =>
      r.source === "jsz" &&
      Array.isArray(
        (r.body as { data?: { meta_cluster?: { replicas?: unknown } } }).data?.meta_cluster?.replicas,
      ),
  )!.server;
  const [survivor] = cluster.nodes.filter((n) => n.name !== leader);
  for (const node of cluster.nodes) if (node !== survivor) await node.stop();
  const sys = await connect({ servers: survivor!.url, user: SYS_USER.user, pass: SYS_USER.password });
  try {
    // A restart after both had been quiet for an hour, seeded from the marker before.
    const quiet = new Map(
      cluster.nodes.filter((n) => n !== survivor).map((n) => [n.name, Date.now() - 3_600_000]),
    );
    const seed = { ...expectedSeed(before), unheardSince: quiet };
    const { marker } = await scrapeOneEpoch(sys, SOURCES, { expected: seed, forgetAfterMs: 60_000 });
    assert.deepEqual(marker.servers_answered, [survivor!.name]);
    assert.deepEqual(marker.servers_expected, ["n1", "n2", "n3"], "both stopped peers stay expected");
    // A marker of an older release says nothing of the peers: no one is forgotten either.
    const { marker: old } = await scrapeOneEpoch(sys, SOURCES, {
      expected: { ...seed, metaPeers: new Map() },
      forgetAfterMs: 60_000,
    });
    assert.deepEqual(old.servers_expected, ["n1", "n2", "n3"]);
  } finally {
    await sys.close();
  }
});
