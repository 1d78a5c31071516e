/**
 * opt-sys-015 to opt-sys-025 on a real 3-node nats-server 2.9.10 cluster, from what the
 * fold stores of real scrapes. Phase A makes every condition at once (an unacknowledged
 * first message under many acknowledged ones, an R3 stream without direct gets, interior
 * deletes, a busy stream with a 2 h duplicate window, a KV bucket without TTL full of
 * superseded revisions, an R1 stream, a discard-new work queue with a 5 s ack wait) and
 * grows subscriptions and a stream's consumers from epoch to epoch; phase B takes each
 * condition away and stops the growth. Each check runs over A's window and over B's, as
 * checks.findings runs an optimization check over its lookback.
 *
 * Fixtures alone cover opt-sys-014 (pending bytes on a local gateway link drain within
 * microseconds, so none is left at scrape time), opt-sys-017 (LEAFZ compression is 2.10+)
 * and opt-sys-026 (JSZ names raft groups from 2.9.15).
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { nanos, type Subscription } from "@nats-io/nats-core";
import {
  AckPolicy,
  DiscardPolicy,
  RetentionPolicy,
  jetstream,
  type JetStreamManager,
  type JsMsg,
} from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { OPT_SYS_CHECKS } from "../../../src/checks/opt-sys/index.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { catalogWith, runCheck } from "./check-harness.ts";
import { startLiveCluster, type LiveCluster, type LiveEpoch } from "./live-fixture.ts";

const SERVERS = ["n1", "n2", "n3"];
/** Epochs of each phase; the window of phase A covers the growth steps between them. */
const EPOCHS_A = 5;
const EPOCHS_B = 3;

const big = (_key: string, value: unknown) => (typeof value === "bigint" ? Number(value) : value);
const check = (code: string) => OPT_SYS_CHECKS.find((c) => c.code === code)!;

describe("opt-sys-015 to 025 on a real 3-node 2.9.10 cluster, conditions made (A) and taken away (B)", () => {
  let live: LiveCluster;
  let catalog: Awaited<ReturnType<typeof catalogWith>>;
  const subs: Subscription[] = [];

  before(async () => {
    live = await startLiveCluster({ sources: ["varz", "jsz", "healthz"] });
    const jsm = await live.jsm();
    const firstUnacked = await makeConditions(jsm);

    const epochs: LiveEpoch[] = [];
    for (let i = 0; i < EPOCHS_A; i++) {
      if (i > 0) await grow(jsm, i);
      await publishBurst();
      epochs.push(await scrape());
    }
    await takeConditionsAway(jsm, firstUnacked);
    for (let i = 0; i < EPOCHS_B; i++) {
      await publishBurst();
      epochs.push(await scrape());
    }
    catalog = await catalogWith(epochs);
  });

  after(async () => {
    await catalog?.[Symbol.asyncDispose]();
    for (const sub of subs) sub.unsubscribe();
    await live?.close();
  });

  /**
   * One epoch that every server answered. Under load a server's VARZ can come after the
   * scraper's quiet window, and the growth checks count the epochs each server answered:
   * CI once saw n3 miss one of phase A's five, and opt-sys-022 not fire for it.
   */
  const scrape = () =>
    waitFor(
      async () => {
        const epoch = await live.scrape();
        const answered = new Set(epoch.replies.filter((r) => r.source === "varz").map((r) => r.server));
        return SERVERS.every((s) => answered.has(s)) && epoch;
      },
      { timeoutMs: 60_000, message: "an epoch every server answered" },
    );

  /** Everything phase A holds from its first epoch; returns proc's unacknowledged first message. */
  async function makeConditions(jsm: JetStreamManager): Promise<JsMsg> {
    const js = jetstream(live.app);
    // opt-sys-015: max_ack_pending 10, 35 deliveries of which all but the first are acknowledged.
    await jsm.streams.add({ name: "ACKS", subjects: ["acks.>"] });
    await jsm.consumers.add("ACKS", {
      durable_name: "slow",
      ack_policy: AckPolicy.Explicit,
      max_ack_pending: 10,
      ack_wait: nanos(300_000),
    });
    for (let i = 0; i < 40; i++) await js.publish(`acks.${i}`, "x");
    const slow = await js.consumers.get("ACKS", "slow");
    let first: JsMsg | undefined;
    let delivered = 0;
    while (delivered < 35) {
      const batch = await slow.fetch({ max_messages: Math.min(9, 35 - delivered), expires: 2000 });
      for await (const m of batch) {
        delivered++;
        if (first) await m.ackAck();
        else first = m;
      }
    }
    // opt-sys-016: R3 without direct gets.
    await jsm.streams.add({ name: "DIRECT", subjects: ["direct.>"], num_replicas: 3, allow_direct: false });
    // opt-sys-018: 30 messages, 28 deleted from the middle (93% of the range).
    await jsm.streams.add({ name: "GAPS", subjects: ["gaps.>"] });
    for (let i = 0; i < 30; i++) await js.publish(`gaps.${i}`, "x");
    for (let seq = 2; seq <= 29; seq++) await jsm.streams.deleteMessage("GAPS", seq);
    // opt-sys-019: a 2 h duplicate window; publishBurst() makes it busy.
    await jsm.streams.add({ name: "DEDUPE", subjects: ["dedupe.>"], duplicate_window: nanos(7_200_000) });
    // opt-sys-020: a key kept at revision 1 in front of 20 superseded revisions of another.
    const kv = await new Kvm(live.app).create("cfg", { history: 1 });
    await kv.put("anchor", "x");
    for (let i = 0; i < 21; i++) await kv.put("k", String(i));
    // opt-sys-021: R1 in a cluster of three JetStream servers.
    await jsm.streams.add({ name: "SINGLE", subjects: ["single.>"], num_replicas: 1 });
    // opt-sys-024: a work queue refusing new messages when full, with a 5 s ack wait.
    await jsm.streams.add({
      name: "JOBS",
      subjects: ["jobs.>"],
      retention: RetentionPolicy.Workqueue,
      discard: DiscardPolicy.New,
      max_msgs: 1000,
    });
    await jsm.consumers.add("JOBS", {
      durable_name: "w",
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(5000),
    });
    // opt-sys-025: grow() adds its consumers.
    await jsm.streams.add({ name: "FANOUT", subjects: ["fanout.>"] });
    return first!;
  }

  /** Between phase A's epochs: 2 more consumers on FANOUT and 100 more subscriptions. */
  async function grow(jsm: JetStreamManager, step: number): Promise<void> {
    for (const k of [0, 1]) {
      await jsm.consumers.add("FANOUT", { durable_name: `c${step}-${k}`, ack_policy: AckPolicy.Explicit });
    }
    for (let k = 0; k < 100; k++) subs.push(live.app.subscribe(`leak.${step}.${k}`));
    await live.app.flush();
  }

  /** 150 messages on DEDUPE before each epoch: 15 a second at the fixture's 10 s epochs. */
  async function publishBurst(): Promise<void> {
    const js = jetstream(live.app);
    await Promise.all(Array.from({ length: 150 }, async (_, i) => js.publish(`dedupe.${i}`, "x")));
  }

  async function takeConditionsAway(jsm: JetStreamManager, firstUnacked: JsMsg): Promise<void> {
    await firstUnacked.ackAck();
    await jsm.streams.update("DIRECT", { allow_direct: true });
    await jsm.streams.purge("GAPS");
    await jsm.streams.update("DEDUPE", { duplicate_window: nanos(120_000) });
    await jsm.streams.update("KV_cfg", { max_age: nanos(3_600_000) });
    await jsm.streams.update("SINGLE", { num_replicas: 3 });
    await jsm.consumers.update("JOBS", "w", { ack_wait: nanos(60_000), max_deliver: -1 });
    // The stream leaders report the new configuration once the meta leader applied it.
    await waitFor(async () => (await jsm.streams.info("SINGLE")).config.num_replicas === 3, {
      message: "SINGLE at 3 replicas",
    });
  }

  /** The check's rows over phase A's window, or phase B's. */
  async function rowsOver(code: string, phase: "A" | "B", params: Record<string, number> = {}) {
    const epochs = catalog.epochs;
    const [from, to] =
      phase === "A" ? [epochs[0]!, epochs[EPOCHS_A - 1]!] : [epochs[EPOCHS_A]!, epochs.at(-1)!];
    return await runCheck(catalog.catalog, check(code), to, params, from);
  }

  const named = (rows: Record<string, unknown>[], name: string) => rows.filter((r) => r.entity_name === name);

  test("opt-sys-015 fires as info while the ack floor trails 35 deliveries at max_ack_pending 10, not once acknowledged", async () => {
    const [row] = named(await rowsOver("opt-sys-015", "A"), "APP/ACKS/slow");
    assert.ok(row, "fires for APP/ACKS/slow");
    assert.deepEqual([row.severity, row.gap, row.ack_floor_seq, row.max_ack_pending], ["info", 35n, 0n, 10n]);
    assert.deepEqual(named(await rowsOver("opt-sys-015", "B"), "APP/ACKS/slow"), []);
  });

  test("opt-sys-016 fires for an R3 stream without direct gets, not once they are allowed", async () => {
    const [row] = named(await rowsOver("opt-sys-016", "A"), "APP/DIRECT");
    assert.equal(row?.replicas, 3);
    assert.deepEqual(named(await rowsOver("opt-sys-016", "B"), "APP/DIRECT"), []);
  });

  test("opt-sys-018 fires for 28 interior deletes in 30 sequences, not after a purge", async () => {
    const params = { p_ratio_min_deleted: 10 };
    const [row] = named(await rowsOver("opt-sys-018", "A", params), "APP/GAPS");
    assert.deepEqual([row?.messages, row?.num_deleted], [2n, 28n]);
    assert.deepEqual(named(await rowsOver("opt-sys-018", "B", params), "APP/GAPS"), []);
  });

  test("opt-sys-019 fires for a busy stream with a 2 h duplicate window, not once it is 2 minutes", async () => {
    const [row] = named(await rowsOver("opt-sys-019", "A"), "APP/DEDUPE");
    assert.deepEqual([row?.severity, row?.duplicate_window_minutes], ["info", 120]);
    assert.ok(Number(row?.msgs_per_sec) >= 10, `msgs_per_sec ${String(row?.msgs_per_sec)}`);
    assert.deepEqual(named(await rowsOver("opt-sys-019", "B"), "APP/DEDUPE"), []);
  });

  test("opt-sys-020 fires for a KV bucket without TTL holding superseded revisions, not once it has one", async () => {
    const params = { p_min_deleted: 10 };
    const [row] = named(await rowsOver("opt-sys-020", "A", params), "APP/KV_cfg");
    assert.deepEqual([row?.bucket, row?.num_deleted], ["cfg", 20n]);
    assert.deepEqual(named(await rowsOver("opt-sys-020", "B", params), "APP/KV_cfg"), []);
  });

  test("opt-sys-021 fires for an R1 stream in the 3-server cluster, not once it has 3 replicas", async () => {
    const [row] = named(await rowsOver("opt-sys-021", "A"), "APP/SINGLE");
    assert.deepEqual([row?.cluster, row?.js_servers], [live.cluster.name, 3n]);
    const after = await rowsOver("opt-sys-021", "B");
    assert.deepEqual(named(after, "APP/SINGLE"), []);
    assert.equal(named(after, "APP/FANOUT").length, 1, "the other R1 streams still fire");
  });

  test("opt-sys-022 fires for every server while one connection adds subscriptions, not once it stops", async () => {
    const params = { p_min_epochs: EPOCHS_A };
    const rows = await rowsOver("opt-sys-022", "A", params);
    assert.deepEqual(rows.map((r) => r.entity_name).sort(), SERVERS);
    for (const row of rows) {
      assert.ok(
        Number(row.subscriptions_last) - Number(row.subscriptions_first) >= 400,
        JSON.stringify(row, big),
      );
      assert.equal(row.connections_last, row.connections_first);
    }
    assert.deepEqual(await rowsOver("opt-sys-022", "B", { p_min_epochs: EPOCHS_B }), []);
  });

  test("opt-sys-024 fires for a 5 s ack wait on a discard-new work queue, not at 60 s and unlimited deliveries", async () => {
    const [row] = named(await rowsOver("opt-sys-024", "A"), "APP/JOBS/w");
    assert.deepEqual([row?.ack_wait_secs, row?.max_deliver], [5, -1n]);
    assert.deepEqual(named(await rowsOver("opt-sys-024", "B"), "APP/JOBS/w"), []);
  });

  test("opt-sys-025 fires while a stream gains consumers every epoch, not once they stop coming", async () => {
    const params = { p_min_growth_epochs: EPOCHS_A - 1, p_min_total_growth: 2 * (EPOCHS_A - 1) };
    const [row] = named(await rowsOver("opt-sys-025", "A", params), "APP/FANOUT");
    assert.deepEqual([row?.consumers_first, row?.consumers_last], [0, 2 * (EPOCHS_A - 1)]);
    assert.deepEqual(
      named(await rowsOver("opt-sys-025", "B", { ...params, p_min_growth_epochs: 1 }), "APP/FANOUT"),
      [],
    );
  });
});
