/**
 * opt-place-002 when the account's clients are split evenly: with the dominance threshold
 * lowered to 50%, east and west each holding half of APP's clients, no cluster holds most of
 * them, so no consumer is reported as away from its clients.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { CHECKS } from "../../../src/checks/index.ts";
import { runFixture } from "./check-harness.ts";
import { appConnections } from "./fixtures/opt-place.ts";

const place002 = CHECKS.find((c) => c.code === "opt-place-002")!;

test("opt-place-002 reports nothing when the clients are split evenly between clusters", async () => {
  // The lab has 7 APP clients in east; 7 more on w1 make an even split.
  assert.deepEqual(await runFixture(place002, [appConnections({ w1: 7 })], { p_min_dominance_pct: 50 }), []);
  // One more in west, and west holds most of them.
  const more = await runFixture(place002, [appConnections({ w1: 8 })], { p_min_dominance_pct: 50 });
  assert.ok(more.length > 0, "8 of 15 in west is most of them");
});
