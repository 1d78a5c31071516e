/**
 * Quorum loss against a real 3-node 2.9.10 cluster: an R3 stream and its R3 consumer lose two
 * of their three servers and get them back. The survivor is the meta leader and leads the
 * stream; the consumer's leader is one of the servers that go away. Each state is scraped
 * with natsmon's own requests and folded; the checks must fire from what the fold stores:
 * - jetstream-008 first from the surviving leader's view, then, once it has stepped down,
 *   from the replicas that still answer;
 * - consumer-003 from the surviving replica's own view of its peers, the leader being gone;
 * - meta-006 from the meta leader's count of offline peers, then, once it has stepped down,
 *   from the one server left reporting the meta group (fewer than a quorum);
 * - meta-001 for each peer down, belonging to that peer's server, so that once the meta
 *   leader steps down (no report of the peers at all) the findings are held, not resolved;
 * and go quiet once the servers are back.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { Finding } from "../../../src/domain/index.ts";
import { CHECKS, type Check } from "../../../src/checks/index.ts";
import { diffFindings } from "../../../src/findings/index.ts";
import { SOURCES } from "../../../src/scrape/index.ts";
import { startTestCluster, type ClusterNode, type TestCluster } from "../../harness/start-nats-cluster.ts";
import { APP_USER, SYS_USER } from "../../harness/start-nats-server.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { scrapeOneEpoch } from "../catalog/live-scrape.ts";
import { catalogWith, runCheck, type FixtureEpoch } from "./check-harness.ts";

const check = (code: string): Check => CHECKS.find((c) => c.code === code)!;
const SCRAPED = SOURCES.filter((s) => ["varz", "jsz", "healthz"].includes(s.name));

interface ClusterView {
  leader?: string;
  replicas?: { name: string; current: boolean; offline?: boolean }[];
}

interface JszView {
  meta?: ClusterView;
  orders?: ClusterView;
  proc?: ClusterView;
}

/** The meta group, ORDERS and its consumer proc as the server `nc` is connected to reports them in JSZ. */
async function seenBy(nc: NatsConnection): Promise<JszView> {
  const reply = await nc.request(
    "$SYS.REQ.SERVER.PING.JSZ",
    JSON.stringify({ accounts: true, streams: true, consumer: true }),
    { timeout: 2000 },
  );
  type Detail = { name: string; cluster?: ClusterView; consumer_detail?: Detail[] };
  type Jsz = { data: { meta_cluster?: ClusterView; account_details?: { stream_detail?: Detail[] }[] } };
  const data = reply.json<Jsz>().data;
  const orders = (data.account_details ?? [])
    .flatMap((a) => a.stream_detail ?? [])
    .find((s) => s.name === "ORDERS");
  return {
    ...(data.meta_cluster ? { meta: data.meta_cluster } : {}),
    ...(orders?.cluster ? { orders: orders.cluster } : {}),
    ...(orders?.consumer_detail?.find((c) => c.name === "proc")?.cluster
      ? { proc: orders.consumer_detail.find((c) => c.name === "proc")!.cluster! }
      : {}),
  };
}

const offline = (view?: ClusterView) => view?.replicas?.filter((r) => r.offline).length ?? 0;

describe("an R3 stream and its consumer on a real 2.9.10 cluster losing quorum and getting it back", () => {
  let cluster: TestCluster;
  let sys: NatsConnection | undefined;
  const epochs: FixtureEpoch[] = [];
  let survivor: ClusterNode;
  let gone: string[];

  async function scrape(nc: NatsConnection): Promise<void> {
    const { replies } = await scrapeOneEpoch(nc, SCRAPED);
    epochs.push({ replies, marker: { servers_expected: ["n1", "n2", "n3"] } });
  }

  before(async () => {
    cluster = await startTestCluster({ size: 3 });
    await cluster.waitForMeta();
    const app = await connect({
      servers: cluster.urls.split(","),
      user: APP_USER.user,
      pass: APP_USER.password,
    });
    try {
      const jsm = await jetstreamManager(app, { timeout: 30_000 });
      // The survivor leads the meta group and ORDERS; proc is led by a server that goes away.
      // Leaders are placed as the assets are created: created again until they are where wanted.
      const anyNc = await connect({
        servers: cluster.urls.split(","),
        user: SYS_USER.user,
        pass: SYS_USER.password,
      });
      const meta = await waitFor(async () => (await seenBy(anyNc)).meta?.leader, {
        message: "a meta leader",
      });
      await anyNc.close();
      survivor = cluster.nodes.find((n) => n.name === meta)!;
      await waitFor(
        async () => {
          await jsm.streams.delete("ORDERS").catch(() => undefined);
          const created = await jsm.streams.add({ name: "ORDERS", subjects: ["orders.>"], num_replicas: 3 });
          const leader = created.cluster?.leader ?? (await jsm.streams.info("ORDERS")).cluster?.leader;
          return leader === survivor.name;
        },
        { timeoutMs: 60_000, message: "ORDERS led by the meta leader" },
      );
      const js = jetstream(app);
      for (let i = 0; i < 10; i++) await js.publish(`orders.${i}`, `order ${i}`);
      // A consumer's leader is placed as it is created: created again until it is not the survivor.
      await waitFor(
        async () => {
          await jsm.consumers.delete("ORDERS", "proc").catch(() => undefined);
          const created = await jsm.consumers.add("ORDERS", {
            durable_name: "proc",
            ack_policy: AckPolicy.Explicit,
          });
          const leader =
            created.cluster?.leader ?? (await jsm.consumers.info("ORDERS", "proc")).cluster?.leader;
          return leader !== undefined && leader !== survivor.name;
        },
        { message: "proc led by a server other than the survivor" },
      );
      // Every replica current, as the leaders see them (a follower's view of its peers is not kept up).
      const allCurrent = (c?: ClusterView) =>
        c?.replicas?.length === 2 && c.replicas.every((r) => r.current && !r.offline);
      // Leadership can move meanwhile (a busy machine, a slow heartbeat): a consumer led by
      // the survivor is asked to step down, or it would not lose its leader below.
      // The meta group's and ORDERS' leadership can move the same way: each is asked to step
      // down until it is back on the survivor, or the survivor would not lead them below.
      const leaderCheck = await connect({
        servers: survivor.url,
        user: SYS_USER.user,
        pass: SYS_USER.password,
      });
      try {
        await waitFor(
          async () => {
            const proc = (await jsm.consumers.info("ORDERS", "proc")).cluster;
            if (proc?.leader === survivor.name) {
              await app
                .request("$JS.API.CONSUMER.LEADER.STEPDOWN.ORDERS.proc", "", { timeout: 2000 })
                .catch(() => undefined);
              return false;
            }
            const orders = (await jsm.streams.info("ORDERS")).cluster;
            if (orders?.leader !== survivor.name) {
              await app
                .request("$JS.API.STREAM.LEADER.STEPDOWN.ORDERS", "", { timeout: 2000 })
                .catch(() => undefined);
              return false;
            }
            const meta = (await seenBy(leaderCheck)).meta;
            if (meta?.leader !== survivor.name) {
              await leaderCheck
                .request("$JS.API.META.LEADER.STEPDOWN", "", { timeout: 2000 })
                .catch(() => undefined);
              return false;
            }
            return allCurrent(orders) && allCurrent(proc);
          },
          {
            timeoutMs: 60_000,
            message:
              "ORDERS and proc with every replica current, the survivor leading the meta group and ORDERS, not proc",
          },
        );
      } finally {
        await leaderCheck.close();
      }
    } finally {
      await app.close();
    }
    gone = cluster.nodes.filter((n) => n !== survivor).map((n) => n.name);
    sys = await connect({ servers: survivor.url, user: SYS_USER.user, pass: SYS_USER.password });
    const nc = sys;
    await scrape(nc); // 0: healthy

    for (const node of cluster.nodes) if (node !== survivor) await node.stop();
    await waitFor(
      async () => {
        const view = await seenBy(nc);
        return (
          view.meta?.leader === survivor.name &&
          offline(view.meta) === 2 &&
          view.orders?.leader === survivor.name &&
          offline(view.orders) === 2 &&
          offline(view.proc) === 2 &&
          view.proc?.leader !== survivor.name
        );
      },
      {
        message:
          "the survivor leading the meta group and ORDERS, seeing every peer offline, not leading proc",
      },
    );
    await scrape(nc); // 1: the survivor still leads and sees its peers offline

    await waitFor(
      async () => {
        const view = await seenBy(nc);
        return view.orders?.leader === undefined && view.meta?.leader === undefined;
      },
      { timeoutMs: 90_000, message: "the survivor stepping down: no meta leader, ORDERS without a leader" },
    );
    await scrape(nc); // 2: no leader

    for (const node of cluster.nodes) await node.start();
    await waitFor(
      async () => {
        const view = await seenBy(nc);
        return [view.orders, view.proc].every(
          (v) => v?.leader !== undefined && v.replicas?.length === 2 && v.replicas.every((r) => !r.offline),
        );
      },
      { timeoutMs: 90_000, message: "ORDERS and proc with a leader and both peers online again" },
    );
    await scrape(nc); // 3: quorum back
  });

  after(async () => {
    await sys?.close();
    await cluster?.[Symbol.asyncDispose]();
  });

  /** Per epoch, the given columns of the check's rows. */
  async function perEpoch(code: string, columns: readonly string[]): Promise<Record<string, unknown>[][]> {
    await using fixture = await catalogWith(epochs);
    const found = [];
    for (const epoch of fixture.epochs) {
      const rows = await runCheck(fixture.catalog, check(code), epoch);
      found.push(rows.map((r) => Object.fromEntries(columns.map((c) => [c, r[c]]))));
    }
    return found;
  }

  test("jetstream-008 fires from the leader's view, then from the answering replica, and not before or after", async () => {
    const found = await perEpoch("jetstream-008", [
      "entity_name",
      "server",
      "leader",
      "replicas_offline",
      "replicas_online",
    ]);
    const down = {
      entity_name: "APP/ORDERS",
      server: survivor.name,
      replicas_offline: 2,
      replicas_online: [survivor.name],
    };
    assert.deepEqual(found, [[], [{ ...down, leader: survivor.name }], [{ ...down, leader: null }], []]);
  });

  test("consumer-003 fires from the surviving replica's own view once its leader is gone, and not before or after", async () => {
    const found = await perEpoch("consumer-003", [
      "entity_name",
      "server",
      "leader",
      "replicas",
      "replicas_down",
      "quorum",
    ]);
    const lost = {
      entity_name: "APP/ORDERS/proc",
      server: survivor.name,
      leader: null,
      replicas: 3,
      replicas_down: 2,
      quorum: 2,
    };
    assert.deepEqual(found, [[], [lost], [lost], []]);
  });

  test("meta-006 fires from the leader's count of offline peers, then from the leaderless survivor alone, and not before or after", async () => {
    const found = await perEpoch("meta-006", [
      "server",
      "leader",
      "cluster_size",
      "quorum",
      "peers_offline",
      "servers_reporting",
    ]);
    const lost = { cluster_size: 3, quorum: 2, servers_reporting: 1n };
    assert.deepEqual(found, [
      [],
      [{ ...lost, server: survivor.name, leader: survivor.name, peers_offline: 2 }],
      // No leader to count peers: one server reporting the group is fewer than a quorum.
      [{ ...lost, server: null, leader: null, peers_offline: null }],
      [],
    ]);
  });

  test("meta-001 fires for each peer down as its own server's finding, held while no meta leader reports it", async () => {
    const found = await perEpoch("meta-001", ["entity_pk", "entity_key", "server", "leader"]);
    assert.deepEqual(
      found[1]!.map(({ entity_key, server, leader }) => ({ entity_key, server, leader })),
      gone.map((peer) => ({ entity_key: peer, server: peer, leader: survivor.name })),
    );
    assert.deepEqual(found[2], [], "without a meta leader no server reports the peers");

    // The diff of epoch 2 against epoch 1: the peers did not answer, so nothing resolves.
    const findings = (rows: Record<string, unknown>[]): Finding[] =>
      rows.map((r) => ({
        code: "meta-001",
        entityType: "meta_peer",
        entityPk: Number(r.entity_pk),
        entityKey: String(r.entity_key),
        entityName: String(r.entity_key),
        server: String(r.server),
        severity: "critical",
      }));
    const ctx = (answered: string[], epoch: number) => ({
      epoch: new Date(epoch),
      answered: new Set(answered),
      disabled: new Set<string>(),
      failed: new Set<string>(),
    });
    const fired = diffFindings(new Map(), findings(found[1]!), ctx([survivor.name], 1));
    const held = diffFindings(fired.baseline, findings(found[2]), ctx([survivor.name], 2));
    assert.deepEqual(held.transitions, [], "no resolve while the peers stay down");
    assert.equal(held.baseline.size, 2);
    const back = diffFindings(held.baseline, findings(found[3]!), ctx(["n1", "n2", "n3"], 3));
    assert.deepEqual(
      back.transitions.map((t) => `${t.status} ${t.finding.entityKey}`),
      gone.map((peer) => `resolved ${peer}`),
    );
  });
});
