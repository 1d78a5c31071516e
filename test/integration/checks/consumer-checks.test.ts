/**
 * The consumer checks beyond their contract fixtures: the NATS CLI's reading of
 * `io.nats.monitor.*` metadata, version gating, the configuration in force over a window,
 * when a replica counts as down, and the guard against comparing replies taken apart.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { ScrapeReply } from "../../../src/catalog/index.ts";
import { macroName, type Check } from "../../../src/checks/index.ts";
import { CONSUMER_CHECKS } from "../../../src/checks/consumer/index.ts";
import { labReplies } from "../catalog/lab-epoch.ts";
import { catalogWith, runCheck, type FixtureEpoch } from "./check-harness.ts";
import { editConsumer, editStream, onVersion, procOn210, procPeers } from "./fixtures/consumer.ts";

function check(code: string): Check {
  const found = CONSUMER_CHECKS.find((c) => c.code === code);
  assert.ok(found, code);
  return found;
}

/** The check's rows over the last epoch of `epochs`, as plain values. */
async function rowsOf(code: string, epochs: FixtureEpoch[]): Promise<Record<string, unknown>[]> {
  await using fixture = await catalogWith(epochs);
  const rows = await runCheck(fixture.catalog, check(code), fixture.epochs.at(-1)!);
  return rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, plain(v)])));
}

function plain(value: unknown): unknown {
  if (typeof value === "bigint") return Number(value);
  if (value instanceof Date) return value.toISOString();
  return value;
}

const names = (rows: Record<string, unknown>[]) => rows.map((r) => r.entity_name).sort();

test("consumer-006..011 read counts as the NATS CLI does: an integer > 0, anything else turns the check off", async () => {
  // proc has 25 acks pending; the CLI parses the key with strconv.Atoi.
  for (const [value, fires] of [
    ["25", true],
    ["+25", true],
    ["0", false],
    ["-1", false],
    ["25.0", false],
    ["2.5e1", false],
    ["twenty", false],
  ] as const) {
    const rows = await rowsOf("consumer-006", [
      procOn210({ "io.nats.monitor.outstanding-ack-critical": value }),
    ]);
    assert.deepEqual(names(rows), fires ? ["hub/APP/ORDERS/proc"] : [], `threshold ${value}`);
  }
});

test("consumers led by a server before 2.10 are not evaluated for metadata thresholds", async () => {
  const on29 = editConsumer(
    "proc",
    (c) => (c.config.metadata = { "io.nats.monitor.unprocessed-critical": "1" }),
  );
  assert.deepEqual(await rowsOf("consumer-008", [on29]), []);
});

test("over a window, each epoch is judged by the metadata in force at that epoch", async () => {
  const none = procOn210({});
  const at25 = procOn210({ "io.nats.monitor.outstanding-ack-critical": "25" });
  const at26 = procOn210({ "io.nats.monitor.outstanding-ack-critical": "26" });
  // Set, removed (which must not fall back to the last configuration that had it), raised
  // above the figure, set again.
  await using fixture = await catalogWith([none, at25, none, at26, at25]);
  const [e0, e1, , , e4] = fixture.epochs;
  const rows = await fixture.catalog.withReader(async (con) =>
    (
      await con.runAndReadAll(
        `SELECT epoch, threshold FROM ${macroName("consumer-006")}($1::TIMESTAMPTZ, $2::TIMESTAMPTZ) ORDER BY epoch`,
        [e0!, e4!],
      )
    ).getRowObjectsJS(),
  );
  assert.deepEqual(
    rows.map((r) => [plain(r.epoch), plain(r.threshold)]),
    [
      [e1, 25],
      [e4, 25],
    ],
  );
});

test("consumer-009 fires for a consumer that never delivered, as the CLI's 'No deliveries'", async () => {
  // laggard has delivered nothing: no delivered.last_active in its reply.
  const replies = editConsumer(
    "laggard",
    (c) => (c.config.metadata = { "io.nats.monitor.last-delivery-critical": "1h" }),
    { replies: onVersion("2.10.22") },
  );
  assert.deepEqual(
    (await rowsOf("consumer-009", [replies])).map((r) => [
      r.entity_name,
      r.last_active,
      r.since_ns,
      r.threshold_ns,
    ]),
    [["hub/APP/ORDERS/laggard", null, null, 3_600_000_000_000]],
  );
  const unparsable = editConsumer(
    "laggard",
    (c) => (c.config.metadata = { "io.nats.monitor.last-delivery-critical": "1d" }),
    { replies: onVersion("2.10.22") },
  );
  assert.deepEqual(await rowsOf("consumer-009", [unparsable]), [], "not a Go duration: off");
});

test("consumer-012 reads io.nats.monitor.pinned as Go's ParseBool and needs 2.11", async () => {
  const pinned = (flag: string, version: string, policy?: string) =>
    editConsumer(
      "proc",
      (c) => {
        c.config.metadata = { "io.nats.monitor.pinned": flag };
        if (policy) c.config.priority_policy = policy;
      },
      { replies: onVersion(version) },
    );
  // No priority_policy key: the policy is none.
  assert.deepEqual(
    (await rowsOf("consumer-012", [pinned("1", "2.11.4")])).map((r) => [r.pinned, r.priority_policy]),
    [["1", "none"]],
  );
  assert.deepEqual(await rowsOf("consumer-012", [pinned("True", "2.12.1", "pinned_client")]), []);
  assert.deepEqual(await rowsOf("consumer-012", [pinned("false", "2.11.4")]), []);
  assert.deepEqual(await rowsOf("consumer-012", [pinned("yes", "2.11.4")]), [], "not a Go bool");
  assert.deepEqual(
    await rowsOf("consumer-012", [pinned("true", "2.10.22")]),
    [],
    "no priority policies before 2.11",
  );
});

/** The lab with n3 not answering at all (a crash), the leaders' views as edited. */
function withoutN3(replies: ScrapeReply[] = labReplies()): ScrapeReply[] {
  return replies.filter((r) => r.server !== "n3");
}

test("a replica the leader no longer calls current, on a server that did not answer, is down before nats-server flags it offline", async () => {
  const crashed = procPeers((peers) => {
    const n3 = peers.find((p) => p.name === "n3")!;
    n3.current = false;
    n3.active = 12_000_000_000;
  }, withoutN3());
  assert.deepEqual(
    (await rowsOf("consumer-001", [crashed])).map((r) => [r.entity_name, r.offline_reported, r.active_ns]),
    [["hub/APP/ORDERS/proc@n3", false, 12_000_000_000]],
  );
  // The same view while n3 answers: a replica catching up, not a replica down.
  const catchingUp = procPeers((peers) => (peers.find((p) => p.name === "n3")!.current = false));
  assert.deepEqual(await rowsOf("consumer-001", [catchingUp]), []);
});

test("consumer-002 leaves down replicas to consumer-001; consumer-003 counts them", async () => {
  const n3Behind = procPeers((peers) => {
    const n3 = peers.find((p) => p.name === "n3")!;
    n3.current = false;
    n3.lag = 5000;
  }, withoutN3());
  assert.deepEqual(await rowsOf("consumer-002", [n3Behind]), []);
  const n2Offline = procPeers((peers) => (peers.find((p) => p.name === "n2")!.offline = true), n3Behind);
  assert.deepEqual(
    (await rowsOf("consumer-003", [n2Offline])).map((r) => [
      r.entity_name,
      r.replicas,
      r.replicas_down,
      r.down_servers,
    ]),
    [["hub/APP/ORDERS/proc", 3, 2, ["n2", "n3"]]],
  );
});

test("consumer-004 and -005 need the consumer leader's own copy of the stream to agree with the stream leader's", async () => {
  // Only the stream leader (n2) moved on; proc's and push1's leader n1 still holds 1..1010.
  const onlyOnN2 = (edit: (state: Record<string, unknown>) => void) =>
    editStream(
      "ORDERS",
      (s) => edit(s.state as Record<string, unknown>),
      labReplies().filter((r) => r.server !== "n1"),
    ).concat(labReplies().filter((r) => r.server === "n1"));
  assert.deepEqual(await rowsOf("consumer-004", [onlyOnN2((s) => (s.first_seq = 500))]), []);
  assert.deepEqual(await rowsOf("consumer-005", [onlyOnN2((s) => (s.last_seq = 1000))]), []);
  // Everywhere: both fire.
  const everywhere = editStream("ORDERS", (s) =>
    Object.assign(s.state as object, { first_seq: 500, last_seq: 1000 }),
  );
  assert.deepEqual(names(await rowsOf("consumer-004", [everywhere])), ["hub/APP/ORDERS/proc"]);
  assert.deepEqual(names(await rowsOf("consumer-005", [everywhere])), ["hub/APP/ORDERS/push1"]);
});

test("consumer-004 does not report a caught-up consumer of an emptied work queue", async () => {
  // WORKQ's consumer delivered up to 13; every message acknowledged and removed: first 14, last 13.
  const emptied = editStream("WORKQ", (s) =>
    Object.assign(s.state as object, { messages: 0, first_seq: 14, last_seq: 13 }),
  );
  const workers = editConsumer("workers", (c) => Object.assign(c, { num_pending: 0, num_ack_pending: 0 }), {
    replies: emptied,
  });
  assert.deepEqual(await rowsOf("consumer-004", [workers]), []);
});

test("consumer-004 does not judge a consumer with filter_subjects, whose gap may be other subjects' messages", async () => {
  // ORDERS' first sequence passed proc's position (425); proc filters two subjects (2.10+).
  const moved = editStream("ORDERS", (s) => ((s.state as Record<string, unknown>).first_seq = 500));
  const filtered = editConsumer("proc", (c) => (c.config.filter_subjects = ["orders.new", "orders.paid"]), {
    replies: moved,
  });
  assert.deepEqual(await rowsOf("consumer-004", [filtered]), []);
  assert.deepEqual(names(await rowsOf("consumer-004", [moved])), ["hub/APP/ORDERS/proc"]);
});
