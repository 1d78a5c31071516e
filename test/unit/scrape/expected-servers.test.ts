import { test } from "node:test";
import assert from "node:assert/strict";
import { silentLogger } from "../../../src/lib/index.ts";
import type { CommitMarker } from "../../../src/protocol/index.ts";
import { ExpectedServers, expectedSeed } from "../../../src/scrape/index.ts";

const MIN = 60_000;
const T0 = Date.parse("2026-11-22T10:00:00.000Z");
const none = new Set<string>();

test("a server not heard from for forget-after is no longer expected; one heard again or a meta peer stays", () => {
  const servers = new ExpectedServers(10 * MIN, silentLogger());
  assert.deepEqual(servers.observe(T0, new Set(["a", "b", "c"]), new Set(["c", "d"])), {
    expected: ["a", "b", "c", "d"],
    unheardSince: { d: "2026-11-22T10:00:00.000Z" },
    forgotten: [],
  });
  // b goes quiet; so does c, a meta peer; d, a peer that never answered, too.
  assert.deepEqual(servers.observe(T0 + 9 * MIN, new Set(["a"]), new Set(["c", "d"])).forgotten, []);
  // An epoch with no JetStream view keeps the peers it last saw.
  const later = servers.observe(T0 + 10 * MIN, new Set(["a"]), none);
  assert.deepEqual(later.forgotten, ["b"]);
  assert.deepEqual(later.expected, ["a", "c", "d"]);
  assert.deepEqual(later.unheardSince, { c: "2026-11-22T10:00:00.000Z", d: "2026-11-22T10:00:00.000Z" });
  // c left the meta group (peer-remove): it goes at once, having been quiet for long.
  assert.deepEqual(servers.observe(T0 + 11 * MIN, new Set(["a"]), new Set(["d"])).forgotten, ["c"]);
  // A server heard again is expected again, from scratch.
  assert.deepEqual(servers.observe(T0 + 12 * MIN, new Set(["a", "b"]), new Set(["d"])).expected, [
    "a",
    "b",
    "d",
  ]);
});

test("an epoch no server answered forgets no one: it saw nothing", () => {
  const servers = new ExpectedServers(10 * MIN, silentLogger());
  servers.observe(T0, new Set(["a", "b"]), none);
  assert.deepEqual(servers.observe(T0 + 60 * MIN, none, none).expected, ["a", "b"]);
  assert.deepEqual(servers.observe(T0 + 61 * MIN, new Set(["a"]), none).forgotten, ["b"]);
});

test("0 never forgets", () => {
  const servers = new ExpectedServers(0, silentLogger());
  servers.observe(T0, new Set(["a", "b"]), none);
  assert.deepEqual(servers.observe(T0 + 1000 * 24 * 60 * MIN, new Set(["a"]), none).expected, ["a", "b"]);
});

test("a restarted scraper counts from the marker's servers_unheard_since, else from the marker's epoch", () => {
  const marker: CommitMarker = {
    system_id: "s",
    epoch: "2026-11-22T10:30:00Z",
    finished_at: "2026-11-22T10:30:01Z",
    parts: [],
    servers_expected: ["a", "b", "c"],
    servers_answered: ["a"],
    servers_unheard_since: { b: "2026-11-22T10:00:00Z" },
    unsupported: [],
    errors: [],
  };
  const servers = new ExpectedServers(40 * MIN, silentLogger(), expectedSeed(marker));
  // b has been quiet since 10:00, c counts from the marker (older markers say nothing).
  const at1045 = servers.observe(Date.parse("2026-11-22T10:45:00Z"), new Set(["a"]), none);
  assert.deepEqual(at1045.forgotten, ["b"]);
  assert.deepEqual(at1045.unheardSince, { c: "2026-11-22T10:30:00.000Z" });
  assert.deepEqual(servers.observe(Date.parse("2026-11-22T11:10:00Z"), new Set(["a"]), none).forgotten, [
    "c",
  ]);
});
