import { test } from "node:test";
import assert from "node:assert/strict";
import { silentLogger } from "../../../src/lib/index.ts";
import type { CommitMarker } from "../../../src/protocol/index.ts";
import {
  ExpectedServers,
  expectedSeed,
  metaGroupViews,
  type MetaGroupView,
} from "../../../src/scrape/index.ts";

const MIN = 60_000;
const T0 = Date.parse("2026-11-22T10:00:00.000Z");
const none = new Map<string, MetaGroupView>();
const set = (...names: string[]) => new Set(names);
/** Meta group "c" as its leader lists it (whole), or as followers alone show it. */
const whole = (...peers: string[]) => new Map([["c", { peers: set(...peers), complete: true }]]);
const part = (...peers: string[]) => new Map([["c", { peers: set(...peers), complete: false }]]);

test("a server not heard from for forget-after is no longer expected; one heard again or a meta peer stays", () => {
  const servers = new ExpectedServers(10 * MIN, silentLogger());
  assert.deepEqual(servers.observe(T0, set("a", "b", "c"), whole("c", "d")), {
    expected: ["a", "b", "c", "d"],
    unheardSince: { d: "2026-11-22T10:00:00.000Z" },
    metaPeers: { c: ["c", "d"] },
    forgotten: [],
  });
  // b goes quiet; so does c, a meta peer; d, a peer that never answered, too.
  assert.deepEqual(servers.observe(T0 + 9 * MIN, set("a"), whole("c", "d")).forgotten, []);
  // An epoch with no JetStream view keeps the peers it last saw.
  const later = servers.observe(T0 + 10 * MIN, set("a"), none);
  assert.deepEqual(later.forgotten, ["b"]);
  assert.deepEqual(later.expected, ["a", "c", "d"]);
  assert.deepEqual(later.unheardSince, { c: "2026-11-22T10:00:00.000Z", d: "2026-11-22T10:00:00.000Z" });
  // c left the meta group (peer-remove): it goes at once, having been quiet for long.
  assert.deepEqual(servers.observe(T0 + 11 * MIN, set("a"), whole("d")).forgotten, ["c"]);
  // A server heard again is expected again, from scratch.
  assert.deepEqual(servers.observe(T0 + 12 * MIN, set("a", "b"), whole("d")).expected, ["a", "b", "d"]);
});

test("a meta group shown without its leader's list adds its members and keeps the peers it knew", () => {
  const servers = new ExpectedServers(10 * MIN, silentLogger());
  servers.observe(T0, set("a", "b", "c"), whole("a", "b", "c"));
  // b (the leader) and c stop: a alone reports the group, naming no peers but itself.
  const after = servers.observe(T0 + 60 * MIN, set("a"), part("a"));
  assert.deepEqual(after.forgotten, []);
  assert.deepEqual(after.metaPeers, { c: ["a", "b", "c"] });
});

test("a meta group never seen whole holds forgetting back: a peer that is down may be missing", () => {
  const servers = new ExpectedServers(10 * MIN, silentLogger(), {
    servers: ["a", "b", "old"],
    unheardSince: new Map([
      ["b", T0 - 60 * MIN],
      ["old", T0 - 60 * MIN],
    ]),
    since: T0,
    metaPeers: new Map(),
  });
  assert.deepEqual(servers.observe(T0, set("a"), part("a")).forgotten, []);
  // Once the leader lists the group, "old" (no peer) goes, b (a peer) stays.
  const listed = servers.observe(T0 + MIN, set("a"), whole("a", "b"));
  assert.deepEqual(listed.forgotten, ["old"]);
  assert.deepEqual(listed.expected, ["a", "b"]);
});

test("an epoch no server answered forgets no one: it saw nothing", () => {
  const servers = new ExpectedServers(10 * MIN, silentLogger());
  servers.observe(T0, set("a", "b"), none);
  assert.deepEqual(servers.observe(T0 + 60 * MIN, set(), none).expected, ["a", "b"]);
  assert.deepEqual(servers.observe(T0 + 61 * MIN, set("a"), none).forgotten, ["b"]);
});

test("0 never forgets", () => {
  const servers = new ExpectedServers(0, silentLogger());
  servers.observe(T0, set("a", "b"), none);
  assert.deepEqual(servers.observe(T0 + 1000 * 24 * 60 * MIN, set("a"), none).expected, ["a", "b"]);
});

test("a restarted scraper counts from the marker's servers_unheard_since, not the time it was down, and keeps its meta_peers", () => {
  const marker: CommitMarker = {
    system_id: "s",
    epoch: "2026-11-22T10:30:00Z",
    finished_at: "2026-11-22T10:30:01Z",
    parts: [],
    servers_expected: ["a", "b", "c", "p"],
    servers_answered: ["a"],
    servers_unheard_since: { b: "2026-11-22T10:00:00Z", p: "2026-11-22T09:00:00Z" },
    meta_peers: { c: ["a", "p"] },
    unsupported: [],
    errors: [],
  };
  const servers = new ExpectedServers(40 * MIN, silentLogger(), expectedSeed(marker));
  // Back at 12:00 after 90 minutes down: b has been quiet for 30 observed minutes, c (older
  // markers say nothing) for none; p is a meta peer, and stays though no leader answers.
  const at1200 = servers.observe(Date.parse("2026-11-22T12:00:00Z"), set("a"), part("a"));
  assert.deepEqual(at1200.forgotten, []);
  assert.deepEqual(at1200.unheardSince, {
    b: "2026-11-22T11:30:00.000Z",
    c: "2026-11-22T12:00:00.000Z",
    p: "2026-11-22T10:30:00.000Z",
  });
  assert.deepEqual(servers.observe(Date.parse("2026-11-22T12:10:00Z"), set("a"), part("a")).forgotten, ["b"]);
  assert.deepEqual(servers.observe(Date.parse("2026-11-22T12:40:00Z"), set("a"), part("a")).forgotten, ["c"]);
});

test("a meta group no server reports for forget-after names no peers any more", () => {
  const servers = new ExpectedServers(10 * MIN, silentLogger());
  servers.observe(T0, set("a", "b"), whole("a", "b"));
  // The whole cluster goes, JetStream with it: its peers stay expected while the group is recent.
  const x = new Set(["x"]);
  assert.deepEqual(servers.observe(T0 + 9 * MIN, x, none).forgotten, []);
  assert.deepEqual(servers.observe(T0 + 10 * MIN, x, none).forgotten, ["a", "b"]);
});

test("JSZ replies: one meta group per JetStream domain, whatever cluster reports it; the leader's list is the whole group", () => {
  const jsz = (server: string, meta?: object, domain?: string) => ({
    server,
    envelope: { data: { meta_cluster: meta, config: domain === undefined ? {} : { domain } } },
  });
  const views = metaGroupViews([
    jsz("n1", { name: "east", leader: "n2" }),
    jsz("n2", { name: "east", leader: "n2", replicas: [{ name: "n1" }, { name: "w1", offline: true }] }),
    // A server of another cluster of the supercluster names its own cluster: the same group.
    jsz("w2", { name: "west", leader: "n2" }),
    jsz("h1", { name: "hub", leader: "h2" }, "hub"),
    jsz("l1"),
  ]);
  assert.deepEqual(
    [...views].map(([name, v]) => [name, [...v.peers].sort(), v.complete]),
    [
      ["", ["n1", "n2", "w1", "w2"], true],
      ["hub", ["h1", "h2"], false],
    ],
  );
});
