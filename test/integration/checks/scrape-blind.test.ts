/**
 * scrape-001 when no server answered at all: natsmon's own connection is the likelier fault
 * (the server it goes through froze), so every server is reported only once nothing has been
 * heard for p_blind_grace_s (a server silent while others answer is reported at once: the
 * check's fixture in fixtures/scrape.ts).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { CHECKS } from "../../../src/checks/index.ts";
import { LAB_SERVERS, labReplies } from "../catalog/lab-epoch.ts";
import { runFixture, type FixtureEpoch } from "./check-harness.ts";

const check = CHECKS.find((c) => c.code === "scrape-001")!;
/** An epoch (10 s after the one before) in which nobody answered. */
const blind: FixtureEpoch = { replies: [], marker: { servers_expected: LAB_SERVERS } };
const named = (rows: Record<string, unknown>[]) => rows.map((r) => String(r.entity_name)).sort();

test("an epoch nobody answered soon after one with answers reports no server", async () => {
  assert.deepEqual(await runFixture(check, [labReplies(), blind]), []);
  assert.deepEqual(await runFixture(check, [labReplies(), blind, blind]), []);
});

test("nobody answering for the grace reports every expected server", async () => {
  const rows = await runFixture(check, [labReplies(), blind, blind, blind]);
  assert.deepEqual(named(rows), [...LAB_SERVERS].sort());
  assert.ok(rows.every((r) => r.servers_answered === 0));
  // A shorter grace reports them at the first such epoch.
  assert.deepEqual(
    named(await runFixture(check, [labReplies(), blind], { p_blind_grace_s: 5 })),
    [...LAB_SERVERS].sort(),
  );
});
