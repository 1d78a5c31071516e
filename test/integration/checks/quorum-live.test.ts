/**
 * jetstream-008 against a real 3-node 2.9.10 cluster: an R3 stream loses two of its three
 * servers and gets them back. Each state is scraped with natsmon's own requests and folded;
 * the check must fire from what the fold stores while quorum is lost (first from the surviving
 * leader's view, then, once it has stepped down, from the replicas that still answer) and go
 * quiet once the servers are back.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { CHECKS } from "../../../src/checks/index.ts";
import { SOURCES } from "../../../src/scrape/index.ts";
import { startTestCluster, type ClusterNode, type TestCluster } from "../../harness/start-nats-cluster.ts";
import { APP_USER, SYS_USER } from "../../harness/start-nats-server.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { scrapeOneEpoch } from "../catalog/live-scrape.ts";
import { catalogWith, runCheck, type FixtureEpoch } from "./check-harness.ts";

const QUORUM_LOST = CHECKS.find((c) => c.code === "jetstream-008")!;
const SCRAPED = SOURCES.filter((s) => ["varz", "jsz", "healthz"].includes(s.name));

interface OrdersView {
  leader?: string;
  replicas?: { name: string; current: boolean; offline?: boolean }[];
}

/** ORDERS' cluster block as the server `nc` is connected to reports it in JSZ. */
async function ordersSeenBy(nc: NatsConnection): Promise<OrdersView | undefined> {
  const reply = await nc.request(
    "$SYS.REQ.SERVER.PING.JSZ",
    JSON.stringify({ accounts: true, streams: true }),
    {
      timeout: 2000,
    },
  );
  type Jsz = { data: { account_details?: { stream_detail?: { name: string; cluster?: OrdersView }[] }[] } };
  const details = reply.json<Jsz>().data.account_details ?? [];
  return details.flatMap((a) => a.stream_detail ?? []).find((s) => s.name === "ORDERS")?.cluster;
}

describe("an R3 stream on a real 2.9.10 cluster losing quorum and getting it back", () => {
  let cluster: TestCluster;
  let sys: NatsConnection | undefined;
  const epochs: FixtureEpoch[] = [];
  let survivor: ClusterNode;

  async function scrape(nc: NatsConnection): Promise<void> {
    const { replies } = await scrapeOneEpoch(nc, SCRAPED);
    epochs.push({ replies, marker: { servers_expected: ["n1", "n2", "n3"] } });
  }

  before(async () => {
    cluster = await startTestCluster({ size: 3 });
    const app = await connect({
      servers: cluster.urls.split(","),
      user: APP_USER.user,
      pass: APP_USER.password,
    });
    try {
      const jsm = await jetstreamManager(app);
      await jsm.streams.add({ name: "ORDERS", subjects: ["orders.>"], num_replicas: 3 });
      const js = jetstream(app);
      for (let i = 0; i < 10; i++) await js.publish(`orders.${i}`, `order ${i}`);
      const leader = (await jsm.streams.info("ORDERS")).cluster?.leader;
      survivor = cluster.nodes.find((n) => n.name === leader)!;
      assert.ok(survivor, `ORDERS has a leader (${leader})`);
    } finally {
      await app.close();
    }
    sys = await connect({ servers: survivor.url, user: SYS_USER.user, pass: SYS_USER.password });
    const nc = sys;
    await waitFor(async () => (await ordersSeenBy(nc))?.replicas?.every((r) => r.current && !r.offline), {
      message: "ORDERS with both followers current",
    });
    await scrape(nc); // 0: healthy

    for (const node of cluster.nodes) if (node !== survivor) await node.stop();
    await waitFor(
      async () => {
        const view = await ordersSeenBy(nc);
        return view?.leader === survivor.name && view.replicas?.filter((r) => r.offline).length === 2;
      },
      { message: "the surviving leader reporting both peers offline" },
    );
    await scrape(nc); // 1: the leader still leads and sees its peers offline

    await waitFor(async () => (await ordersSeenBy(nc))?.leader === undefined, {
      timeoutMs: 90_000,
      message: "the survivor stepping down: ORDERS without a leader",
    });
    await scrape(nc); // 2: no leader

    for (const node of cluster.nodes) await node.start();
    await waitFor(
      async () => {
        const view = await ordersSeenBy(nc);
        return (
          view?.leader !== undefined && view.replicas?.length === 2 && view.replicas.every((r) => !r.offline)
        );
      },
      { timeoutMs: 90_000, message: "ORDERS with a leader and both peers online again" },
    );
    await scrape(nc); // 3: quorum back
  });

  after(async () => {
    await sys?.close();
    await cluster?.[Symbol.asyncDispose]();
  });

  test("fires from the leader's view, then from the answering replica, and not before or after", async () => {
    await using fixture = await catalogWith(epochs);
    const found = [];
    for (const epoch of fixture.epochs) {
      const rows = await runCheck(fixture.catalog, QUORUM_LOST, epoch);
      found.push(
        rows.map((r) => ({
          entity_name: r.entity_name,
          server: r.server,
          leader: r.leader,
          replicas_offline: r.replicas_offline,
          replicas_online: r.replicas_online,
        })),
      );
    }
    const down = {
      entity_name: "APP/ORDERS",
      server: survivor.name,
      replicas_offline: 2,
      replicas_online: [survivor.name],
    };
    assert.deepEqual(found, [[], [{ ...down, leader: survivor.name }], [{ ...down, leader: null }], []]);
  });
});
