/**
 * The stream checks driven by io.nats.monitor.* metadata read their thresholds as natscli
 * does: a bound <= 0, absent or not a number is off; msgs/subjects bounds flip to "too
 * few" when critical is below warning; severity follows the value per epoch over a window;
 * servers older than 2.10 are not evaluated. Real catalogs of edited lab epochs.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ScrapeReply } from "../../../src/catalog/index.ts";
import { CHECKS, macroName, type Check } from "../../../src/checks/index.ts";
import { labReplies } from "../catalog/lab-epoch.ts";
import { catalogWith } from "./check-harness.ts";
import { atVersion, editStream, monitoredStream, withMonitor } from "./fixtures/stream-edits.ts";

function check(code: string): Check {
  const found = CHECKS.find((c) => c.code === code);
  assert.ok(found, code);
  return found;
}

/** The check's rows over every epoch of `epochs` (one window), by epoch then entity. */
async function rowsOver(code: string, epochs: ScrapeReply[][]): Promise<Record<string, unknown>[]> {
  await using fixture = await catalogWith(epochs);
  const sql = `SELECT * FROM ${macroName(check(code).code)}($1::TIMESTAMPTZ, $2::TIMESTAMPTZ) ORDER BY epoch, entity_name`;
  return await fixture.catalog.withReader(async (con) =>
    (await con.runAndReadAll(sql, [fixture.epochs[0]!, fixture.epochs.at(-1)!])).getRowObjectsJS(),
  );
}

/** Stream `name` holding `messages` messages in every replica's reply. */
function withMessages(name: string, messages: number, replies: ScrapeReply[]): ScrapeReply[] {
  return editStream(name, (d) => (d.state.messages = messages), replies);
}

/** The lab at 2.10 with ORDERS bounded by msgs-warn 1000 and msgs-critical 2000, holding `messages`. */
function ordersHolding(messages: number): ScrapeReply[] {
  return withMessages(
    "ORDERS",
    messages,
    monitoredStream("ORDERS", { "msgs-warn": "1000", "msgs-critical": "2000" }),
  );
}

test("a stream's message count moves from warning to critical and back within bounds, one row per epoch", async () => {
  const rows = await rowsOver("jetstream-024", [
    ordersHolding(1010),
    ordersHolding(2500),
    ordersHolding(500),
  ]);
  assert.deepEqual(
    rows.map((r) => [r.entity_name, r.severity, r.messages, r.msgs_warn, r.msgs_critical, r.direction]),
    [
      ["hub/APP/ORDERS", "warning", 1010n, 1000n, 2000n, "above"],
      ["hub/APP/ORDERS", "critical", 2500n, 1000n, 2000n, "above"],
    ],
  );
  // The same entity in both epochs: the engine sees a severity change, not a new finding.
  assert.equal(rows[0]!.entity_pk, rows[1]!.entity_pk);
});

/**
 * One 2.10 epoch with a different reading of the bounds on each stream (messages held in
 * the lab: ORDERS 1010, EVENTS 4544, WORKQ 40, KV_config 21, ALL_SOURCED 4664).
 */
function boundCases(version: string): ScrapeReply[] {
  return withMonitor(
    {
      ORDERS: { "msgs-warn": "2000", "msgs-critical": "1500" },
      EVENTS: { "msgs-warn": "5000", "msgs-critical": "4000" },
      WORKQ: { "msgs-critical": "30" },
      KV_config: { "msgs-warn": "0", "msgs-critical": "-1" },
      ALL_SOURCED: { "msgs-warn": "many", "msgs-critical": "" },
    },
    atVersion(version, labReplies()),
  );
}

test("critical below warning means too few; a single bound counts upwards; 0, negative and non-numbers are off", async () => {
  const rows = await rowsOver("jetstream-024", [boundCases("2.10.22")]);
  assert.deepEqual(
    rows.map((r) => [r.entity_name, r.severity, r.messages, r.direction]),
    [
      ["hub/APP/EVENTS", "warning", 4544n, "below"],
      ["hub/APP/ORDERS", "critical", 1010n, "below"],
      ["hub/APP/WORKQ", "critical", 40n, "above"],
    ],
  );
});

test("streams led by a server older than 2.10 are not evaluated", async () => {
  assert.deepEqual(await rowsOver("jetstream-024", [boundCases("2.9.10")]), []);
});

test("subject counts follow the same bounds: too few subjects when critical is below warning", async () => {
  const rows = await rowsOver("jetstream-025", [
    withMonitor(
      {
        ORDERS: { "subjects-warn": "20", "subjects-critical": "12" },
        WORKQ: { "subjects-warn": "30", "subjects-critical": "50" },
        EVENTS: { "subjects-warn": "5", "subjects-critical": "6" },
      },
      atVersion("2.10.22"),
    ),
  ]);
  // ORDERS holds 11 subjects, WORKQ 40, EVENTS 6.
  assert.deepEqual(
    rows.map((r) => [r.entity_name, r.severity, r.num_subjects, r.direction]),
    [
      ["hub/APP/EVENTS", "critical", 6n, "above"],
      ["hub/APP/ORDERS", "critical", 11n, "below"],
      ["hub/APP/WORKQ", "warning", 40n, "above"],
    ],
  );
});

test("seen thresholds are Go durations: 1m30s fires a mirror silent for 2 minutes, not one silent for 80 s", async () => {
  const mirror = (activeNs: number) =>
    monitoredStream("ORDERS_MIRROR", { "seen-critical": "1m30s" }, (d) => {
      d.mirror = { name: "ORDERS", lag: 0, active: activeNs };
    });
  const rows = await rowsOver("jetstream-018", [mirror(120e9), mirror(80e9)]);
  assert.deepEqual(
    rows.map((r) => [r.entity_name, r.mirror_active_ns, r.seen_critical, r.seen_critical_ns]),
    [["hub/APP/ORDERS_MIRROR", 120_000_000_000n, "1m30s", 90_000_000_000n]],
  );
});

test("the metadata in force at each epoch counts: bounds removed by a later config edit stop the check from then on", async () => {
  const bounded = monitoredStream("ORDERS", { "msgs-warn": "1000" });
  const unbounded = editStream("ORDERS", (d) => delete d.config.metadata, bounded);
  const rows = await rowsOver("jetstream-024", [bounded, unbounded, bounded]);
  assert.deepEqual(
    rows.map((r) => [r.entity_name, r.severity]),
    [
      ["hub/APP/ORDERS", "warning"],
      ["hub/APP/ORDERS", "warning"],
    ],
  );
  assert.notEqual(rows[0]!.epoch, rows[1]!.epoch);
});
