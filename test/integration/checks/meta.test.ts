/**
 * The meta checks beyond their contract fixtures: whose view counts when servers disagree,
 * the rolling window of meta-003, dynamic severity and version gates, and windows of epochs.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { CHECKS, macroName, type Check } from "../../../src/checks/index.ts";
import { editReply, labReplies } from "../catalog/lab-epoch.ts";
import type { ScrapeReply } from "../../../src/catalog/index.ts";
import { catalogWith, runFixture, type FixtureEpoch } from "./check-harness.ts";
import { everyMeta, hubVersion, labWithJsz, metaLedBy } from "./fixtures/meta.ts";

const check = (code: string): Check => CHECKS.find((c) => c.code === code)!;

/** Selected columns of a check's rows over the last fixture epoch. */
async function fired(code: string, epochs: FixtureEpoch[], columns: string[], params = {}) {
  const rows = await runFixture(check(code), epochs, params);
  return rows.map((r) => Object.fromEntries(columns.map((c) => [c, r[c]])));
}

test("meta-001 reads the peers from the claimant most servers follow, not from a stale second claimant; the finding is the peer's server's", async () => {
  // n2 also claims to lead and sees n3 and w1 offline; the other four servers follow n1,
  // whose reply sees only w2 offline.
  const replies = everyMeta((meta, server) => {
    if (server === "n1") meta.replicas = meta.replicas!.map((r) => ({ ...r, offline: r.name === "w2" }));
    if (server === "n2") {
      meta.leader = "n2";
      meta.replicas = ["n1", "n3", "w1", "w2"].map((name) => ({
        name,
        current: name !== "n3" && name !== "w1",
        offline: name === "n3" || name === "w1",
        active: 9_000_000_000,
      }));
    }
  });
  assert.deepEqual(
    await fired("meta-001", [replies], ["entity_name", "entity_key", "server", "leader", "peers_offline"]),
    [{ entity_name: "w2", entity_key: "w2", server: "w2", leader: "n1", peers_offline: 1 }],
  );
});

test("meta-001 says nothing when the leader did not answer: no server's own view replaces it", async () => {
  const replies = labWithJsz("jsz_n3_down.json").filter((r) => !(r.source === "jsz" && r.server === "n1"));
  assert.deepEqual(await fired("meta-001", [replies], ["entity_name"]), []);
});

test("meta-006 fires without a leader when fewer servers than a quorum report the meta group", async () => {
  // 21 s after three of five peers went down n1 stepped down; n2 still names it. The group
  // keeps its domain's name.
  assert.deepEqual(
    await fired(
      "meta-006",
      [labReplies(), labWithJsz("jsz_meta_no_quorum_21s.json")],
      ["entity_name", "server", "leader", "peers_offline", "servers_reporting", "quorum"],
    ),
    [
      {
        entity_name: "hub",
        server: null,
        leader: null,
        peers_offline: null,
        servers_reporting: 2n,
        quorum: 3,
      },
    ],
  );
});

test("meta-006 does not guess when the leader the others name did not answer", async () => {
  const replies = labWithJsz("jsz_meta_no_quorum_6s.json").filter(
    (r) => !(r.source === "jsz" && r.server === "n1"),
  );
  assert.deepEqual(await fired("meta-006", [replies], ["entity_name"]), []);
});

test("meta-003 counts only the leader changes inside the rolling window", async () => {
  const epochs = [labReplies(), metaLedBy("n2"), metaLedBy("n1")];
  // Changes at +10 s and +20 s: a 15 s window before +20 s holds both, a 9 s one only the last.
  assert.deepEqual(
    await fired("meta-003", epochs, ["leader_changes", "leaders"], { p_window_minutes: 0.25 }),
    [{ leader_changes: 2n, leaders: ["n1", "n2", "n1"] }],
  );
  assert.deepEqual(await fired("meta-003", epochs, ["leader_changes"], { p_window_minutes: 0.15 }), []);
});

test("meta-003 over a window of epochs returns each epoch where the changes exceed the limit", async () => {
  await using fixture = await catalogWith([
    labReplies(),
    metaLedBy("n2"),
    metaLedBy("n1"),
    labWithJsz("jsz_meta_no_quorum_21s.json"),
    metaLedBy("w1"),
  ]);
  const rows = await fixture.catalog.withReader(async (con) =>
    (
      await con.runAndReadAll(
        `SELECT epoch::VARCHAR AS epoch, entity_name, leader_changes, leaders
         FROM ${macroName("meta-003")}($1::TIMESTAMPTZ, $2::TIMESTAMPTZ) ORDER BY epoch`,
        [fixture.epochs[0]!, fixture.epochs.at(-1)!],
      )
    ).getRowObjectsJS(),
  );
  // The leaderless epoch (+30 s) still sees the two earlier changes; the switch to w1 (in
  // west) after it is the third. The group keeps its domain's name: a leader in west does
  // not rename it (nats-server reports the leader's own cluster as the group's name).
  assert.deepEqual(
    rows.map((r) => [r.entity_name, r.leader_changes, r.leaders]),
    [
      ["hub", 2n, ["n1", "n2", "n1"]],
      ["hub", 2n, ["n1", "n2", "n1"]],
      ["hub", 3n, ["n1", "n2", "n1", "w1"]],
    ],
  );
});

test("meta-004 is critical above the critical threshold and skips servers too old to report snapshots", async () => {
  const slow = (version: string) =>
    everyMeta((meta, server) => {
      if (server === "w1") meta.snapshot = { pending_entries: 9, pending_size: 100, last_duration: 31e9 };
    }, hubVersion(version));
  assert.deepEqual(await fired("meta-004", [slow("2.12.2")], ["server", "severity", "snapshot_seconds"]), [
    { server: "w1", severity: "critical", snapshot_seconds: 31 },
  ]);
  // A server below minServerVersion is not evaluated, whatever its reply carries.
  assert.deepEqual(await fired("meta-004", [slow("2.11.10")], ["server"]), []);
});

test("meta-008 reads the leader's queue only, and only from servers that report it", async () => {
  const pending = (version: string) =>
    everyMeta((meta, server) => (meta.pending = server === "n1" ? 800 : 0), hubVersion(version));
  assert.deepEqual(await fired("meta-008", [pending("2.10.21")], ["server", "pending"]), [
    { server: "n1", pending: 800n },
  ]);
  assert.deepEqual(await fired("meta-008", [pending("2.10.20")], ["server"]), []);
});

test("meta-009 does not read an epoch without a leader as the group shrinking", async () => {
  assert.deepEqual(
    await fired("meta-009", [labReplies(), labWithJsz("jsz_meta_no_quorum_21s.json")], ["entity_name"]),
    [],
  );
});

/** The lab's replies with the hub's JetStream domain removed: a supercluster without domains. */
function withoutDomain(replies: ScrapeReply[]): ScrapeReply[] {
  for (const server of ["n1", "n2", "n3", "w1", "w2"]) {
    replies = editReply(
      "jsz",
      server,
      (body) => {
        delete (body.data.config as Record<string, unknown>).domain;
        delete body.server.domain;
        return body;
      },
      replies,
    );
  }
  return replies;
}

test("a meta group spanning east and west without a domain is east+west whichever cluster its leader is in", async () => {
  await using fixture = await catalogWith([
    withoutDomain(labReplies()),
    withoutDomain(metaLedBy("w1")),
    withoutDomain(metaLedBy("n2")),
  ]);
  const rows = await fixture.catalog.withReader(async (con) =>
    (
      await con.runAndReadAll(
        `SELECT entity_name, leader_changes FROM ${macroName("meta-003")}($1::TIMESTAMPTZ, $2::TIMESTAMPTZ, p_max_changes := 0)
         ORDER BY epoch`,
        [fixture.epochs[0]!, fixture.epochs.at(-1)!],
      )
    ).getRows(),
  );
  assert.deepEqual(rows, [
    ["east+west", 1n],
    ["east+west", 2n],
  ]);
});

test("meta-001 names the group by its domain, not by the cluster of a leader in west", async () => {
  // w1 leads and sees n3 offline.
  const replies = everyMeta((meta, server) => {
    if (server === "w1") meta.replicas = meta.replicas!.map((r) => ({ ...r, offline: r.name === "n3" }));
  }, metaLedBy("w1"));
  assert.deepEqual(await fired("meta-001", [replies], ["entity_name", "leader", "meta_group"]), [
    { entity_name: "n3", leader: "w1", meta_group: "hub" },
  ]);
});
