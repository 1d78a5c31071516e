/**
 * The server checks that compare a counter or count with an earlier epoch (server-004,
 * server-012, server-013, jetstream-004, jetstream-006, jetstream-009), when the server did not
 * answer the previous epoch: each compares with the last epoch of the past hour the server
 * answered, so what changed across the missed scrape is reported, and a rate is taken over the
 * time since that epoch.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { CHECKS, type Check } from "../../../src/checks/index.ts";
import { labReplies } from "../catalog/lab-epoch.ts";
import { fixtureEpochTime, runFixture, type FixtureEpoch } from "./check-harness.ts";
import { editJsz } from "./fixtures/jetstream.ts";
import { edit, without } from "./fixtures/server.ts";
import { newerCounters } from "./fixtures/server-limits.ts";

const check = (code: string): Check => CHECKS.find((c) => c.code === code)!;

/** The lab with `server`'s JSZ API counters raised by `total` and `errors`. */
function apiMoved(server: string, total: number, errors: number) {
  return editJsz(server, (body) => {
    body.data.api.total = Number(body.data.api.total) + total;
    body.data.api.errors = Number(body.data.api.errors) + errors;
  });
}

/** `before`, then an epoch `server` does not answer, then `after`. */
function missedBetween(server: string, before: FixtureEpoch, after: FixtureEpoch): FixtureEpoch[] {
  const answered = "replies" in before ? before.replies : before;
  return [before, without(server, [...answered]), after];
}

test("server-004 reports slow consumers counted while the server missed the previous epoch", async () => {
  const rows = await runFixture(
    check("server-004"),
    missedBetween(
      "n1",
      edit("varz", "n1", (v) => (v.slow_consumers = 3)),
      edit("varz", "n1", (v) => (v.slow_consumers = 4)),
    ),
  );
  assert.deepEqual(
    rows.map((r) => [
      r.entity_name,
      r.new_slow_consumers,
      r.slow_consumers,
      r.previous_slow_consumers,
      r.restarted,
    ]),
    [["n1", 1n, 4n, 3n, false]],
  );
});

test("server-004 does not compare with a server's answer older than an hour", async () => {
  const rows = await runFixture(check("server-004"), [
    { replies: edit("varz", "n1", (v) => (v.slow_consumers = 3)), at: fixtureEpochTime(0) },
    { replies: without("n1"), at: fixtureEpochTime(360) },
    { replies: edit("varz", "n1", (v) => (v.slow_consumers = 4)), at: fixtureEpochTime(361) },
  ]);
  assert.deepEqual(rows, []);
});

test("server-012 and server-013 count the events of a missed epoch", async () => {
  const stale = await runFixture(
    check("server-012"),
    missedBetween(
      "n1",
      newerCounters({ n1: { stale_connections: 2 } }),
      newerCounters({ n1: { stale_connections: 5 } }),
    ),
  );
  assert.deepEqual(
    stale.map((r) => [r.entity_name, r.new_stale_connections]),
    [["n1", 3n]],
  );
  const stalled = await runFixture(
    check("server-013"),
    missedBetween(
      "w1",
      newerCounters({ w1: { stalled_clients: 10 } }),
      newerCounters({ w1: { stalled_clients: 11 } }),
    ),
  );
  assert.deepEqual(
    stalled.map((r) => [r.entity_name, r.new_stalled_clients]),
    [["w1", 1n]],
  );
});

test("jetstream-004 takes the rate over the time since the epoch the server last answered", async () => {
  // 1200 requests in the 20 s since n3's last answer: 60 per second, at or above 50.
  const fires = await runFixture(
    check("jetstream-004"),
    missedBetween("n3", labReplies(), apiMoved("n3", 1200, 0)),
  );
  assert.deepEqual(
    fires.map((r) => [r.entity_name, r.api_requests, r.interval_seconds, r.requests_per_second]),
    [["n3", 1200n, 20, 60]],
  );
  // 900 in 20 s is 45 per second, not 90 over the 10 s since the previous epoch.
  assert.deepEqual(
    await runFixture(check("jetstream-004"), missedBetween("n3", labReplies(), apiMoved("n3", 900, 0))),
    [],
  );
});

test("jetstream-006 and jetstream-009 compare with the epoch the server last answered", async () => {
  const consumers = await runFixture(
    check("jetstream-006"),
    missedBetween(
      "n1",
      labReplies(),
      editJsz("n1", (body) => (body.data.consumers = 6 + 5001)),
    ),
  );
  assert.deepEqual(
    consumers.map((r) => [r.entity_name, r.prev_consumers, r.delta]),
    [["n1", 6n, 5001n]],
  );
  const errors = await runFixture(
    check("jetstream-009"),
    missedBetween("n3", labReplies(), apiMoved("n3", 200, 3)),
  );
  assert.deepEqual(
    errors.map((r) => [r.entity_name, r.api_requests, r.api_errors]),
    [["n3", 200n, 3n]],
  );
});
