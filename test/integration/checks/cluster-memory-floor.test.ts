/**
 * cluster-001 reports memory that matters: a server well above its cluster's average by
 * ratio, and by at least p_min_excess_bytes, not small servers' noise.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { cluster001 } from "../../../src/checks/cluster/cluster-001.ts";
import { labReplies } from "../catalog/lab-epoch.ts";
import { runFixture } from "./check-harness.ts";
import { edit } from "./fixtures/server.ts";

/** The lab's cluster east with its servers' resident memory set. */
function east(mem: Record<string, number>) {
  let replies = labReplies();
  for (const [server, bytes] of Object.entries(mem))
    replies = edit("varz", server, (v) => (v.mem = bytes), replies);
  return [replies];
}

test("cluster-001 lets small servers pass that differ by a large ratio for little memory", async () => {
  // n2 60 MB against 20 MB each: average 33 MB, 1.8 times it, but only 27 MB above it.
  assert.deepEqual(await runFixture(cluster001, east({ n1: 20e6, n2: 60e6, n3: 20e6 })), []);
});

test("cluster-001 reports a server both over the ratio and the floor above the average, with the excess", async () => {
  // n2 300 MB against 100 MB each: average 167 MB, 1.8 times it, 133 MB above it.
  const rows = await runFixture(cluster001, east({ n1: 100e6, n2: 300e6, n3: 100e6 }));
  assert.deepEqual(
    rows.map((r) => [r.entity_name, r.excess_bytes]),
    [["n2", 133_333_333n]],
  );
  // A floor set to 0 reports the small servers' difference too.
  const small = await runFixture(cluster001, east({ n1: 20e6, n2: 60e6, n3: 20e6 }), {
    p_min_excess_bytes: 0,
  });
  assert.deepEqual(
    small.map((r) => r.entity_name),
    ["n2"],
  );
});
