/**
 * opt-place-002 when the account's clients are split evenly: with the dominance threshold
 * lowered to 50%, east and west each holding half of APP's clients, no cluster holds most of
 * them, so no consumer is reported as away from its clients. opt-place-003 across a server
 * restart and below its minimum of traffic.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { CHECKS } from "../../../src/checks/index.ts";
import { runFixture } from "./check-harness.ts";
import { appConnections, appGatewayBytes } from "./fixtures/opt-place.ts";

const place002 = CHECKS.find((c) => c.code === "opt-place-002")!;
const place003 = CHECKS.find((c) => c.code === "opt-place-003")!;
const MiB = 1024 * 1024;

test("opt-place-002 reports nothing when the clients are split evenly between clusters", async () => {
  // The lab has 7 APP clients in east; 7 more on w1 make an even split.
  assert.deepEqual(await runFixture(place002, [appConnections({ w1: 7 })], { p_min_dominance_pct: 50 }), []);
  // One more in west, and west holds most of them.
  const more = await runFixture(place002, [appConnections({ w1: 8 })], { p_min_dominance_pct: 50 });
  assert.ok(more.length > 0, "8 of 15 in west is most of them");
});

test("opt-place-003 counts what a restarted server holds, and judges no account below its minimum", async () => {
  // 2 MiB with 1 MiB over gateways; then n1 restarts and has counted 512 KiB, none over gateways.
  const rows = await runFixture(place003, [
    appGatewayBytes(1000, 0),
    appGatewayBytes(1000 + 2 * MiB, MiB),
    appGatewayBytes(MiB / 2, 0),
  ]);
  assert.deepEqual(
    rows.map((r) => [r.entity_name, r.gateway_bytes, r.total_bytes, r.gateway_pct]),
    [["APP", BigInt(MiB), BigInt(2.5 * MiB), 40]],
  );
  // All of it over gateways, but only 512 KiB in the window.
  assert.deepEqual(
    await runFixture(place003, [appGatewayBytes(0, 0), appGatewayBytes(MiB / 2, MiB / 2)]),
    [],
  );
});
