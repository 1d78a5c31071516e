/**
 * The opt-balance checks on a real 3-node nats-server 2.9.10 cluster, from what the fold
 * stores of real scrapes, run over a window as checks.findings runs them:
 * - leaders: an R3 stream and its four R3 consumers all led by n1 (stepped down until they
 *   are) fire opt-balance-001 for n1 and opt-balance-007 for the stream; spread over n2 and
 *   n3 again, neither fires;
 * - clients: twelve APP clients on n1 (the test's own two are on n2), one holding 150
 *   subscriptions, fire opt-balance-002, -003 and -006 for n1; closed, nothing fires;
 * - placement: R1 streams created while n3 was down sit on n1 and n2 only and hold all the
 *   storage: opt-balance-004, -005 and -008 fire for them and never for n3 (thresholds
 *   lowered: the defaults want hundreds of streams, gigabytes and a nearly full disk);
 *   deleted, nothing fires.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { AckPolicy, jetstream, type JetStreamManager } from "@nats-io/jetstream";
import type { Check } from "../../../src/checks/index.ts";
import { OPT_BALANCE_CHECKS } from "../../../src/checks/opt-balance/index.ts";
import type { ClusterNode } from "../../harness/start-nats-cluster.ts";
import { APP_USER } from "../../harness/start-nats-server.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { catalogWith, runCheck } from "./check-harness.ts";
import { startLiveCluster, type LiveCluster, type LiveEpoch } from "./live-fixture.ts";

const check = (code: string): Check => OPT_BALANCE_CHECKS.find((c) => c.code === code)!;
const CONSUMERS = ["c1", "c2", "c3", "c4"];

/** A check to run, with thresholds other than its defaults. */
interface Run {
  readonly code: string;
  readonly params?: Readonly<Record<string, number>>;
}

describe("opt-balance checks on a real 3-node 2.9.10 cluster", () => {
  let live: LiveCluster;
  let jsm: JetStreamManager;
  let node: (name: string) => ClusterNode;

  before(async () => {
    // The monitor and the admin client stay on n2: n1 gets the test's clients, n3 goes down.
    live = await startLiveCluster({ sources: ["varz", "jsz", "connz", "accstatz"], connectTo: ["n2"] });
    node = (name) => live.cluster.nodes.find((n) => n.name === name)!;
    jsm = await live.jsm();
  });

  after(async () => {
    await live?.close();
  });

  /** Two epochs scraped now, folded, and the checks run over them as one window. */
  async function findingsNow(runs: readonly Run[]): Promise<Record<string, Record<string, unknown>[]>> {
    const epochs: LiveEpoch[] = [];
    for (let i = 0; i < 2; i++) epochs.push(await live.scrape());
    await using fixture = await catalogWith(epochs);
    const result: Record<string, Record<string, unknown>[]> = {};
    for (const run of runs) {
      result[run.code] = await runCheck(
        fixture.catalog,
        check(run.code),
        fixture.epochs.at(-1)!,
        run.params ?? {},
        fixture.epochs[0],
      );
    }
    return result;
  }

  /** The checks' rows once none fires any more (or the last rows seen, at the deadline). */
  async function quietNow(runs: readonly Run[]): Promise<Record<string, Record<string, unknown>[]>> {
    let last: Record<string, Record<string, unknown>[]> = {};
    await waitFor(
      async () => {
        last = await findingsNow(runs);
        return Object.values(last).every((rows) => rows.length === 0);
      },
      { timeoutMs: 20_000, message: "the checks to stop firing" },
    ).catch(() => undefined);
    return last;
  }

  /** Steps a raft group's leader down until `leader` leads it (the new leader is chosen at random). */
  async function leadOn(what: () => Promise<string | undefined>, stepDown: string, leader: string) {
    await waitFor(
      async () => {
        const now = await what();
        if (now === leader) return true;
        if (now !== undefined) await live.app.request(stepDown, "", { timeout: 5000 });
        await waitFor(async () => ((await what()) ?? now) !== now || undefined, { timeoutMs: 10_000 });
        return false;
      },
      { timeoutMs: 60_000, intervalMs: 10, message: `${stepDown} led by ${leader}` },
    );
  }

  const streamLeader = async () => (await jsm.streams.info("ORDERS")).cluster?.leader;
  const consumerLeader = (name: string) => async () =>
    (await jsm.consumers.info("ORDERS", name)).cluster?.leader;
  const consumerOn = (name: string, leader: string) =>
    leadOn(consumerLeader(name), `$JS.API.CONSUMER.LEADER.STEPDOWN.ORDERS.${name}`, leader);

  test("a stream and its consumers all led by n1: 001 fires for n1 and 007 for the stream; spread, neither does", async () => {
    await jsm.streams.add({ name: "ORDERS", subjects: ["orders.>"], num_replicas: 3 });
    for (const name of CONSUMERS) {
      await jsm.consumers.add("ORDERS", { durable_name: name, ack_policy: AckPolicy.Explicit });
    }
    await leadOn(streamLeader, "$JS.API.STREAM.LEADER.STEPDOWN.ORDERS", "n1");
    for (const name of CONSUMERS) await consumerOn(name, "n1");

    const skewed = await findingsNow([{ code: "opt-balance-001" }, { code: "opt-balance-007" }]);
    assert.deepEqual(
      skewed["opt-balance-001"]!.map((r) => [
        r.entity_name,
        r.stream_leaders,
        r.consumer_leaders,
        r.cluster_servers,
      ]),
      [["n1", 1, 4, 3]],
    );
    assert.deepEqual(
      skewed["opt-balance-007"]!.map((r) => [
        r.entity_name,
        r.leader,
        r.replicated_consumers,
        r.colocated_consumers,
      ]),
      [["APP/ORDERS", "n1", 4, 4]],
    );

    await consumerOn("c1", "n2");
    await consumerOn("c2", "n2");
    await consumerOn("c3", "n3");
    await consumerOn("c4", "n3");
    const spread = await findingsNow([
      { code: "opt-balance-001", params: { p_min_leaders: 1 } },
      { code: "opt-balance-007" },
    ]);
    assert.deepEqual(spread, { "opt-balance-001": [], "opt-balance-007": [] });
    await jsm.streams.delete("ORDERS");
  });

  test("twelve APP clients on n1, one with 150 subscriptions: 002, 003 and 006 fire for n1; closed, none does", async () => {
    const clients: NatsConnection[] = [];
    try {
      for (let i = 0; i < 12; i++) {
        clients.push(
          await connect({ servers: node("n1").url, user: APP_USER.user, pass: APP_USER.password }),
        );
      }
      for (let i = 0; i < 150; i++) clients[0]!.subscribe(`sensor.${i}.reading`);
      await clients[0]!.flush();
      const runs: Run[] = [
        { code: "opt-balance-002", params: { p_min_connections: 10 } },
        { code: "opt-balance-003" },
        { code: "opt-balance-006" },
      ];
      const hot = await findingsNow(runs);
      assert.deepEqual(
        hot["opt-balance-002"]!.map((r) => [r.entity_name, r.connections]),
        [["n1", 12n]],
      );
      assert.deepEqual(
        hot["opt-balance-003"]!.map((r) => [r.entity_name, r.subscriptions]),
        [["n1", 150n]],
      );
      assert.deepEqual(
        hot["opt-balance-006"]!.map((r) => [
          r.entity_name,
          r.entity_key,
          r.connections,
          r.cluster_connections,
        ]),
        [["APP", "n1", 12n, 13n]],
      );
      await Promise.all(clients.splice(0).map(async (c) => c.close()));
      // A server learns of a closed connection a moment after the client is done with it.
      assert.deepEqual(await quietNow(runs), {
        "opt-balance-002": [],
        "opt-balance-003": [],
        "opt-balance-006": [],
      });
    } finally {
      await Promise.all(clients.map(async (c) => c.close()));
    }
  });

  test("R1 streams made while n3 was down: 004, 005 and 008 fire for their servers, never n3; deleted, none does", async () => {
    await node("n3").stop();
    const js = jetstream(live.app);
    const names = Array.from({ length: 8 }, (_, i) => `LOG${i}`);
    for (const name of names) {
      // n3 may have led the meta group: until a new leader is elected, a create times out.
      // Asked again, an existing stream of the same configuration is simply returned.
      await waitFor(
        async () =>
          jsm.streams.add({ name, subjects: [`${name}.>`], num_replicas: 1 }).then(
            () => true,
            () => false,
          ),
        { timeoutMs: 60_000, message: `stream ${name} created with n3 down` },
      );
      for (let i = 0; i < 20; i++) await js.publish(`${name}.x`, new Uint8Array(4096));
    }
    await node("n3").start();
    await live.cluster.waitForMeta();
    // The averages need n3 in them: 004 judges only a cluster of three that answered JSZ.
    await waitFor(
      async () => (await live.scrape()).replies.some((r) => r.server === "n3" && r.source === "jsz"),
      { timeoutMs: 30_000, message: "n3 answering JSZ again" },
    );

    // The storage percentages against a real disk are tiny: the thresholds are set from
    // the fullest server's, read with both at 0.
    const all = (
      await findingsNow([{ code: "opt-balance-008", params: { p_saturation_pct: 0, p_skew_pp: 0 } }])
    )["opt-balance-008"]!;
    const fullest = Math.max(...all.map((r) => Number(r.used_pct)));
    assert.ok(fullest > 0, `used_pct ${all.map((r) => String(r.used_pct)).join(", ")}`);
    const runs: Run[] = [
      { code: "opt-balance-004", params: { p_multiplier: 1.2, p_min_replicas: 3 } },
      { code: "opt-balance-005", params: { p_multiplier: 1.2, p_min_bytes: 1 } },
      { code: "opt-balance-008", params: { p_saturation_pct: fullest / 2, p_skew_pp: fullest / 4 } },
    ];
    const placed = await findingsNow(runs);
    for (const run of runs) {
      const servers = placed[run.code]!.map((r) => String(r.entity_name));
      assert.ok(servers.length > 0, `${run.code} fired for none`);
      assert.ok(!servers.includes("n3"), `${run.code} fired for ${servers.join(", ")}`);
    }
    const n1n2 = (
      await Promise.all(names.map(async (n) => (await jsm.streams.info(n)).cluster?.leader))
    ).sort();
    assert.ok(
      placed["opt-balance-004"]!.every((r) => n1n2.includes(String(r.entity_name))),
      "004 fires for servers holding the streams",
    );

    for (const name of names) await jsm.streams.delete(name);
    assert.deepEqual(await quietNow(runs), {
      "opt-balance-004": [],
      "opt-balance-005": [],
      "opt-balance-008": [],
    });
  });
});
