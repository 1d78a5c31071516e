/**
 * consumer-001 on a real 3-node nats-server cluster, from what the fold stores of one real
 * scrape: a follower of an R3 consumer shut down cleanly (flagged offline by the leader at
 * once), back again (resolved), then killed (flagged offline by nats-server only minutes
 * later; the check sees it down once the leader stops calling it current).
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { CONSUMER_CHECKS } from "../../../src/checks/consumer/index.ts";
import { SOURCES } from "../../../src/scrape/index.ts";
import { startTestCluster, type ClusterNode, type TestCluster } from "../../harness/start-nats-cluster.ts";
import { APP_USER, SYS_USER } from "../../harness/start-nats-server.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { scrapeOneEpoch } from "../catalog/live-scrape.ts";
import { catalogWith, runCheck } from "./check-harness.ts";

const SERVERS = ["n1", "n2", "n3"];
const SCRAPED = SOURCES.filter((s) => ["varz", "jsz", "healthz"].includes(s.name));
const consumer001 = CONSUMER_CHECKS.find((c) => c.code === "consumer-001")!;

describe("consumer-001 on a real 3-node 2.9.10 cluster with an R3 consumer", () => {
  let cluster: TestCluster;
  let app: NatsConnection;
  let sys: NatsConnection;
  let follower: ClusterNode;

  before(async () => {
    cluster = await startTestCluster({ size: 3 });
    app = await connect({ servers: cluster.urls.split(","), user: APP_USER.user, pass: APP_USER.password });
    // Set-up: replicated assets on a fresh cluster can outlast the API's 5 s while other files load the CPUs.
    const jsm = await jetstreamManager(app, { timeout: 30_000 });
    await jsm.streams.add({ name: "ORDERS", subjects: ["orders.>"], num_replicas: 3 });
    await jsm.consumers.add("ORDERS", { durable_name: "proc", ack_policy: AckPolicy.Explicit });
    const js = jetstream(app);
    for (let i = 0; i < 10; i++) await js.publish(`orders.${i}`, `order ${i}`);
    // Every replica current and online before anything is judged: just made, a replica can
    // still be catching up, and a busy machine made the first test see it offline.
    const leader = await waitFor(
      async () => {
        const c = (await jsm.consumers.info("ORDERS", "proc")).cluster;
        const ready = c?.replicas?.length === 2 && c.replicas.every((r) => r.current && !r.offline);
        return ready && c.leader;
      },
      { message: "proc with a leader and every replica current" },
    );
    follower = cluster.nodes.find((n) => n.name !== leader)!;
    // The monitor connects to the other two, so it keeps its connection while the follower is down.
    const others = cluster.nodes.filter((n) => n !== follower).map((n) => n.url);
    sys = await connect({ servers: others, user: SYS_USER.user, pass: SYS_USER.password });
  });

  after(async () => {
    await sys?.close();
    await app?.close();
    await cluster?.[Symbol.asyncDispose]();
  });

  /** consumer-001's rows for one freshly scraped and folded epoch. */
  async function consumer001Now(): Promise<Record<string, unknown>[]> {
    const { replies } = await scrapeOneEpoch(sys, SCRAPED);
    await using fixture = await catalogWith([{ replies, marker: { servers_expected: SERVERS } }]);
    // Awaited here: the catalog closes (interrupting its readers) when this scope ends.
    return await runCheck(fixture.catalog, consumer001, fixture.epochs[0]!);
  }

  test("a follower shut down cleanly is reported offline by the leader: the check fires for its replica", async () => {
    assert.deepEqual(await consumer001Now(), [], "all replicas online");
    await follower.stop();
    const rows = await waitFor(
      async () => {
        const found = await consumer001Now();
        return found.length > 0 && found;
      },
      { timeoutMs: 60_000, message: "consumer-001 after a clean shutdown" },
    );
    assert.deepEqual(
      rows.map((r) => [r.entity_name, r.server, r.offline_reported, r.replicas_down]),
      [[`APP/ORDERS/proc@${follower.name}`, follower.name, true, 1]],
    );
  });

  test("back again, the replica rejoins and the check no longer fires", async () => {
    await follower.start();
    await waitFor(async () => (await consumer001Now()).length === 0, {
      timeoutMs: 60_000,
      message: "consumer-001 to clear after the restart",
    });
  });

  test("a killed follower is down once the leader stops calling it current, before nats-server flags it offline", async () => {
    await follower.kill();
    const rows = await waitFor(
      async () => {
        const found = await consumer001Now();
        return found.length > 0 && found;
      },
      { timeoutMs: 60_000, message: "consumer-001 after a crash" },
    );
    assert.deepEqual(
      rows.map((r) => [r.entity_name, r.server, r.offline_reported]),
      [[`APP/ORDERS/proc@${follower.name}`, follower.name, false]],
    );
    // The leader has not heard from it for longer than it allows a current peer (2.9: 10 s).
    assert.ok(Number(rows[0]!.active_ns) > 0, `active_ns ${String(rows[0]!.active_ns)}`);
  });
});
