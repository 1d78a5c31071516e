/**
 * The opt-sys optimization checks on a real 3-node nats-server 2.9.10 cluster, from what the
 * fold stores of real scrapes, each run over the window of the epochs it is given: the
 * condition is made real, the check fires for its entity; the condition goes away, it does
 * not. 2.9.10 has no RAFTZ, no named stream raft groups and no leafnode compression, so
 * opt-sys-006, -007, -010, -013 and -023 are covered by their fixtures only, and opt-sys-009 here by
 * the meta group; route pending bytes (opt-sys-005) cannot be produced on demand.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "@nats-io/transport-node";
import { nanos } from "@nats-io/nats-core";
import { AckPolicy, jetstream, type JetStreamManager, type JsMsg } from "@nats-io/jetstream";
import type { Check } from "../../../src/checks/index.ts";
import { OPT_SYS_CHECKS } from "../../../src/checks/opt-sys/index.ts";
import { APP_USER } from "../../harness/start-nats-server.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { runFixture } from "./check-harness.ts";
import { startLiveCluster, type LiveCluster, type LiveEpoch } from "./live-fixture.ts";

const SERVERS = ["n1", "n2", "n3"];
const check = (code: string): Check => OPT_SYS_CHECKS.find((c) => c.code === code)!;

describe("opt-sys checks on a real 3-node 2.9.10 cluster", () => {
  let live: LiveCluster;
  let jsm: JetStreamManager;

  before(async () => {
    live = await startLiveCluster({ sources: ["varz", "jsz", "healthz", "subsz", "routez"] });
    jsm = await live.jsm();
  });

  after(async () => {
    await live?.close();
  });

  const scrape = () => live.scrape();

  /** The check's rows over the window of `epochs`, folded in order. */
  async function over(
    code: string,
    epochs: readonly LiveEpoch[],
    params: Record<string, number> = {},
  ): Promise<Record<string, unknown>[]> {
    return runFixture(check(code), epochs, params);
  }

  const names = (rows: Record<string, unknown>[]) => rows.map((r) => String(r.entity_name));

  /** Waits for consumer `name` of `stream` to meet `ready` in its leader's info. */
  async function consumerState(
    stream: string,
    name: string,
    ready: (info: Awaited<ReturnType<JetStreamManager["consumers"]["info"]>>) => boolean,
  ): Promise<void> {
    await waitFor(async () => ready(await jsm.consumers.info(stream, name)), {
      message: `${stream}/${name} to reach the state asked for`,
    });
  }

  /** Fetches up to `count` messages of a pull consumer, without acknowledging them. */
  async function fetch(stream: string, name: string, count: number): Promise<JsMsg[]> {
    const consumer = await jetstream(live.app).consumers.get(stream, name);
    const got: JsMsg[] = [];
    for await (const m of await consumer.fetch({ max_messages: count, expires: 2000 })) {
      got.push(m);
      if (got.length === count) break;
    }
    return got;
  }

  test("opt-sys-001: a stream with no bound at all is reported, and no longer once it has one", async () => {
    await jsm.streams.add({ name: "UNBOUNDED", subjects: ["unb.>"] });
    await jsm.streams.add({ name: "AGED", subjects: ["aged.>"], max_age: nanos(3_600_000) });
    const first = await scrape();
    const rows = await over("opt-sys-001", [first]);
    assert.ok(names(rows).includes("APP/UNBOUNDED"), `fired for ${names(rows).join(", ")}`);
    assert.ok(!names(rows).includes("APP/AGED"));

    await jsm.streams.update("UNBOUNDED", { max_msgs: 1000 });
    const bounded = await over("opt-sys-001", [first, await scrape()]);
    assert.ok(!names(bounded).includes("APP/UNBOUNDED"), `fired for ${names(bounded).join(", ")}`);
  });

  test("opt-sys-008: the APP account has JetStream without limits, the system account is left out", async () => {
    const rows = await over("opt-sys-008", [await scrape()]);
    assert.deepEqual(
      rows.map((r) => [r.entity_name, r.severity]),
      [["APP", "info"]],
    );
  });

  test("opt-sys-002: redeliveries pending over the window's deliveries are reported until they are acknowledged", async () => {
    await jsm.streams.add({ name: "REDO", subjects: ["redo.>"], max_age: nanos(3_600_000) });
    for (let i = 0; i < 10; i++) await jetstream(live.app).publish(`redo.${i}`, "job");
    await jsm.consumers.add("REDO", {
      durable_name: "redo",
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(1000),
    });
    const start = await scrape();
    assert.equal((await fetch("REDO", "redo", 10)).length, 10);
    // Not acknowledged within ack_wait (1 s): the next pulls get them again.
    const redelivered: JsMsg[] = [];
    await waitFor(
      async () => {
        for (const m of await fetch("REDO", "redo", 10 - redelivered.length))
          if (m.redelivered) redelivered.push(m);
        return redelivered.length === 10;
      },
      { timeoutMs: 30_000, message: "the 10 messages redelivered" },
    );
    await consumerState("REDO", "redo", (c) => c.num_redelivered === 10);
    const pressed = await scrape();
    const rows = await over("opt-sys-002", [start, pressed]);
    const redo = rows.find((r) => r.entity_name === "APP/REDO/redo");
    assert.ok(redo, `fired for ${names(rows).join(", ")}`);
    assert.equal(redo.num_redelivered, 10n);
    assert.equal(redo.delivered_in_window, 20n);

    for (const m of redelivered) m.ack();
    await consumerState("REDO", "redo", (c) => c.num_ack_pending === 0 && c.num_redelivered === 0);
    const settled = await over("opt-sys-002", [start, pressed, await scrape()]);
    assert.ok(!names(settled).includes("APP/REDO/redo"), `fired for ${names(settled).join(", ")}`);
  });

  test("opt-sys-003: acks pending at 90% of max_ack_pending are reported, and not once acknowledged", async () => {
    await jsm.streams.add({ name: "HELD", subjects: ["held.>"], max_age: nanos(3_600_000) });
    for (let i = 0; i < 10; i++) await jetstream(live.app).publish(`held.${i}`, "job");
    await jsm.consumers.add("HELD", {
      durable_name: "held",
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(600_000),
      max_ack_pending: 10,
    });
    const held = await fetch("HELD", "held", 9);
    await consumerState("HELD", "held", (c) => c.num_ack_pending === 9);
    const pending = await scrape();
    const rows = await over("opt-sys-003", [pending]);
    assert.deepEqual(
      rows
        .filter((r) => r.entity_name === "APP/HELD/held")
        .map((r) => [r.num_ack_pending, r.max_ack_pending]),
      [[9n, 10n]],
    );

    for (const m of held) m.ack();
    await consumerState("HELD", "held", (c) => c.num_ack_pending === 0);
    const acked = await over("opt-sys-003", [pending, await scrape()]);
    assert.ok(!names(acked).includes("APP/HELD/held"), `fired for ${names(acked).join(", ")}`);
  });

  test("opt-sys-004: a push consumer nobody subscribes to is reported, and not once a subscriber binds", async () => {
    await jsm.streams.add({ name: "PUSHY", subjects: ["pushy.>"], max_age: nanos(3_600_000) });
    await jsm.consumers.add("PUSHY", {
      durable_name: "orphan",
      ack_policy: AckPolicy.Explicit,
      deliver_subject: "deliver.orphan",
    });
    const unbound = await scrape();
    const rows = await over("opt-sys-004", [unbound]);
    assert.deepEqual(
      rows.filter((r) => r.entity_name === "APP/PUSHY/orphan").map((r) => r.deliver_subject),
      ["deliver.orphan"],
    );

    const sub = live.app.subscribe("deliver.orphan");
    try {
      await consumerState("PUSHY", "orphan", (c) => c.push_bound === true);
      const bound = await over("opt-sys-004", [unbound, await scrape()]);
      assert.ok(!names(bound).includes("APP/PUSHY/orphan"), `fired for ${names(bound).join(", ")}`);
    } finally {
      sub.unsubscribe();
    }
  });

  test("opt-sys-011 and -012: one subject with 60 subscribers and 600 subscription changes on n1 are reported", async () => {
    const n1 = live.cluster.nodes.find((n) => n.name === "n1")!;
    const client = await connect({ servers: n1.url, user: APP_USER.user, pass: APP_USER.password });
    try {
      const before = await scrape();
      // 300 subscriptions made and removed: 600 sublist changes on n1.
      const churn = Array.from({ length: 300 }, (_, i) => client.subscribe(`churn.${i}`));
      await client.flush();
      for (const s of churn) s.unsubscribe();
      // 60 subscribers on fan.x, one on each of 10 other subjects, each subject published
      // to so that it sits in n1's sublist cache: a maximum fanout of 60 against an average
      // of about 6.
      for (let i = 0; i < 60; i++) client.subscribe("fan.x");
      for (let i = 0; i < 10; i++) client.subscribe(`one.${i}`);
      await client.flush();
      client.publish("fan.x");
      for (let i = 0; i < 10; i++) client.publish(`one.${i}`);
      await client.flush();
      const busy = await scrape();

      const fanout = await over("opt-sys-011", [busy], { p_multiplier: 5 });
      assert.ok(names(fanout).includes("n1"), `opt-sys-011 fired for ${names(fanout).join(", ")}`);
      const churned = await over("opt-sys-012", [before, busy], { p_max_churn: 500 });
      assert.ok(names(churned).includes("n1"), `opt-sys-012 fired for ${names(churned).join(", ")}`);
      assert.ok(Number(churned.find((r) => r.entity_name === "n1")!.peak_churn) >= 600);
    } finally {
      await client.close();
    }
    // The subscribers gone (their cache entries with them), and no churn since.
    const after = await scrape();
    const calm = await scrape();
    assert.ok(!names(await over("opt-sys-011", [calm], { p_multiplier: 5 })).includes("n1"));
    assert.deepEqual(await over("opt-sys-012", [after, calm], { p_max_churn: 500 }), []);
  });

  test("opt-sys-009: the meta group that lost its leader with two of three servers is reported, and not once they are back", async () => {
    const led = await scrape();
    const leader = (
      led.replies.find((r) => r.source === "jsz")!.body as { data: { meta_cluster: { leader: string } } }
    ).data.meta_cluster.leader;
    const gone = live.cluster.nodes
      .filter((n) => n.name === leader)
      .concat(live.cluster.nodes.find((n) => n.name !== leader)!);
    await Promise.all(gone.map(async (n) => n.stop()));
    const rows = await waitFor(
      async () => {
        const found = await over("opt-sys-009", [led, await scrape()]);
        return found.length > 0 && found;
      },
      { timeoutMs: 60_000, message: "opt-sys-009 after the meta leader and a follower stopped" },
    );
    assert.deepEqual(
      rows.map((r) => [r.entity_name, r.severity, r.members, r.servers_reporting]),
      [["_meta_", "critical", SERVERS, 1]],
    );

    await Promise.all(gone.map(async (n) => n.start()));
    await live.cluster.waitForMeta();
    assert.deepEqual(await over("opt-sys-009", [led, await scrape()]), []);
  });
});
