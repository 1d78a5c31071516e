/**
 * natsmon's own connections to the monitored system, as the commit marker names them
 * (own_connections: server, client id, account), are no clients of their account: the checks
 * that count an account's clients from STATZ leave them out. Each case fires with them
 * counted and not without.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { CHECKS, type Check } from "../../../src/checks/index.ts";
import type { OwnConnection } from "../../../src/protocol/index.ts";
import { runFixture, type FixtureEpoch } from "./check-harness.ts";
import { appConnections, westWithoutStreams } from "./fixtures/opt-place.ts";

const check = (code: string): Check => CHECKS.find((c) => c.code === code)!;

/** `replies` as one epoch whose marker names `own` as natsmon's connections. */
function withOwn(replies: FixtureEpoch, own: OwnConnection[]): FixtureEpoch {
  return { replies: replies as never, marker: { own_connections: own } };
}

const discoveryOn = (server: string, cid = 900): OwnConnection => ({ server, cid, account: "APP" });

test("opt-place-001 counts 4 of APP's 11 clients in west, not 5 of 12, when one on w1 is natsmon's", async () => {
  const replies = appConnections({ w1: 5 }, westWithoutStreams());
  const counted = await runFixture(check("opt-place-001"), [replies]);
  assert.deepEqual(
    counted.map((r) => [r.entity_key, r.connections, r.account_connections]),
    [["west", 5n, 12n]],
  );
  assert.deepEqual(await runFixture(check("opt-place-001"), [withOwn(replies, [discoveryOn("w1")])]), []);
});

test("opt-place-002 finds no cluster holding most of APP's clients when natsmon's connection tipped it", async () => {
  // The lab's 7 APP clients in east, 8 on w1 of which one is natsmon's: 7 against 7.
  const replies = appConnections({ w1: 8 });
  const params = { p_min_dominance_pct: 50 };
  assert.ok((await runFixture(check("opt-place-002"), [replies], params)).length > 0);
  assert.deepEqual(
    await runFixture(check("opt-place-002"), [withOwn(replies, [discoveryOn("w1")])], params),
    [],
  );
});

test("opt-balance-006 leaves natsmon's connection on n1 out of APP's share there", async () => {
  // 8 of 11 APP connections on n1 (73%); natsmon's among them, 7 of 10 (70%, not above).
  const replies = appConnections({ n1: 8, n2: 3 });
  const counted = await runFixture(check("opt-balance-006"), [replies]);
  assert.deepEqual(
    counted.map((r) => [r.entity_key, r.connections, r.cluster_connections]),
    [["n1", 8n, 11n]],
  );
  assert.deepEqual(await runFixture(check("opt-balance-006"), [withOwn(replies, [discoveryOn("n1")])]), []);
});

test("a connection natsmon recorded on another server, or in another account, is not subtracted", async () => {
  const replies = appConnections({ n1: 8, n2: 3 });
  const elsewhere = withOwn(replies, [discoveryOn("n2"), { server: "n1", cid: 901 }]);
  const rows = await runFixture(check("opt-balance-006"), [elsewhere]);
  // n2's natsmon connection leaves 7 + 2: n1 holds 8 of 10; the scrape connection on n1 is in SYS.
  assert.deepEqual(
    rows.map((r) => [r.entity_key, r.connections, r.cluster_connections]),
    [["n1", 8n, 10n]],
  );
});
