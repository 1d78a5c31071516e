/**
 * Checks whose finding is a figure over several servers (a sum over the meta group, replica
 * counts compared, a cluster's average or majority) when one server the figure depends on misses a scrape: run
 * through the engine (runEpochChecks on a real catalog) and the findings diff as the catalog
 * side runs them, a finding stays firing with its first start time, and no finding appears
 * for a server that is in line with its whole cluster.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { runEpochChecks, type ScrapeReply } from "../../../src/catalog/index.ts";
import { CHECKS, findingsSelectSql, type Check } from "../../../src/checks/index.ts";
import type { FiringFinding } from "../../../src/domain/index.ts";
import { diffFindings } from "../../../src/findings/index.ts";
import { catalogWith, type FixtureEpoch } from "./check-harness.ts";
import { ordersReplicaCounts } from "./fixtures/jetstream-monitor.ts";
import { FIXTURES } from "./fixtures/index.ts";
import { everyMeta } from "./fixtures/meta.ts";
import { edit, without } from "./fixtures/server.ts";

const check = (code: string): Check => CHECKS.find((c) => c.code === code)!;

interface Run {
  /** Per epoch, its transitions as `<status> <entity name>`. */
  readonly transitions: string[][];
  /** The findings firing after the last epoch, as `<entity name> since <starts_at>`. */
  readonly firing: string[];
  readonly epochs: string[];
}

/** Folds `epochs` and checks each in turn with `code`, diffing each against the one before. */
async function checkEach(
  code: string,
  epochs: readonly FixtureEpoch[],
  params: Readonly<Record<string, number>> = {},
): Promise<Run> {
  await using lab = await catalogWith(epochs);
  const statements = [{ code, sql: findingsSelectSql(check(code), params), disabled: false }];
  let baseline = new Map<string, FiringFinding>();
  const transitions: string[][] = [];
  for (const epoch of lab.epochs) {
    const result = await runEpochChecks(lab.catalog, epoch, statements);
    assert.ok(result?.ran, `checks ran over ${epoch}`);
    assert.deepEqual(result.failed, []);
    const diffed = diffFindings(baseline, result.findings, {
      epoch: new Date(epoch),
      answered: new Set(result.answered),
      expected: new Set(result.expected),
      leaderless: new Set(result.leaderless),
      disabled: new Set(),
      failed: new Set(),
    });
    transitions.push(diffed.transitions.map((t) => `${t.status} ${t.finding.entityName}`));
    baseline = diffed.baseline;
  }
  const firing = [...baseline.values()].map((f) => `${f.entityName} since ${f.startsAt.toISOString()}`);
  return { transitions, firing, epochs: lab.epochs };
}

/** `replies` of every server, then the same without `server`'s, then every server's again. */
function missedOnce(server: string, replies: () => ScrapeReply[]): FixtureEpoch[] {
  return [replies(), without(server, replies()), replies()];
}

/** The lab's east cluster with its servers' resident memory set, in bytes. */
function eastMem(mem: Record<string, number>): ScrapeReply[] {
  let replies: ScrapeReply[] | undefined;
  for (const [server, bytes] of Object.entries(mem))
    replies = edit("varz", server, (v) => (v.mem = bytes), replies);
  return replies!;
}

test("meta-005 stays firing with its first start while a server holding replicas misses a scrape", async () => {
  // The hub holds 30 stream and consumer replicas, 9 of them on n2; the meta leader n1 answers.
  const run = await checkEach(
    "meta-005",
    missedOnce("n2", () => everyMeta(() => {})),
    { p_max_assets: 28 },
  );
  // The meta group is named by its JetStream domain (hub), whichever cluster its leader is in.
  assert.deepEqual(run.transitions, [["firing hub"], [], []]);
  assert.deepEqual(run.firing, [`hub since ${new Date(run.epochs[0]!).toISOString()}`]);
});

test("meta-002 stays firing with its first start while the second claimant misses a scrape", async () => {
  const run = await checkEach(
    "meta-002",
    missedOnce("n2", () => everyMeta((meta, server) => server === "n2" && (meta.leader = "n2"))),
  );
  // The meta group is named by its JetStream domain (hub), whichever cluster its leader is in.
  assert.deepEqual(run.transitions, [["firing hub"], [], []]);
  assert.deepEqual(run.firing, [`hub since ${new Date(run.epochs[0]!).toISOString()}`]);
});

test("cluster-001 keeps an outlier firing while a peer that lowers the average misses a scrape", async () => {
  // n2 300 MB against 100 MB each: 1.8 times the average. Without n1, n2 and n3 average
  // 200 MB, and n2 would be only 1.5 times it.
  const run = await checkEach(
    "cluster-001",
    missedOnce("n1", () => eastMem({ n1: 100e6, n2: 300e6, n3: 100e6 })),
  );
  assert.deepEqual(run.transitions, [["firing n2"], [], []]);
  assert.deepEqual(run.firing, [`n2 since ${new Date(run.epochs[0]!).toISOString()}`]);
});

test("cluster-001 does not report a server above the others once the largest peer misses a scrape", async () => {
  // n1 700 MB, n2 350 MB, n3 100 MB: n1 is the outlier. Without n1, n2 would be 1.56 times
  // the average of n2 and n3 and 125 MB above it.
  const run = await checkEach(
    "cluster-001",
    missedOnce("n1", () => eastMem({ n1: 700e6, n2: 350e6, n3: 100e6 })),
  );
  assert.deepEqual(run.transitions, [["firing n1"], [], []]);
  assert.deepEqual(run.firing, [`n1 since ${new Date(run.epochs[0]!).toISOString()}`]);
});

test("cluster-001 leaves out of the average a peer that has not answered for an hour", async () => {
  const replies = eastMem({ n1: 700e6, n2: 350e6, n3: 100e6 });
  await using lab = await catalogWith([
    { replies, at: "2026-01-01T00:00:00Z" },
    { replies: without("n1", replies), at: "2026-01-01T01:00:10Z" },
  ]);
  const result = await runEpochChecks(lab.catalog, lab.epochs[1]!, [
    { code: "cluster-001", sql: findingsSelectSql(check("cluster-001"), {}), disabled: false },
  ]);
  assert.deepEqual(
    result?.findings.map((f) => f.entityName),
    ["n2"],
  );
});

test("server-002 keeps judging by the cluster's majority version while a server of it misses a scrape", async () => {
  // n3 was upgraded ahead of n1 and n2. Without n1, n2 and n3 tie, and a tie goes to the
  // newer release: n2 would be reported and n3 resolved.
  const run = await checkEach(
    "server-002",
    missedOnce("n1", () => edit("varz", "n3", (v) => (v.version = "2.10.24"))),
  );
  assert.deepEqual(run.transitions, [["firing n3"], [], []]);
  assert.deepEqual(run.firing, [`n3 since ${new Date(run.epochs[0]!).toISOString()}`]);
});

test("cluster-008 keeps judging by the cluster's majority gateways while a server of it misses a scrape", async () => {
  // n3 configures a gateway to south that n1 and n2 do not. Without n1, two gateway servers
  // answer, too few for a majority.
  const extra = () =>
    edit("varz", "n3", (v) => {
      (v.gateway as { gateways: Record<string, unknown>[] }).gateways.push({
        name: "south",
        urls: ["127.0.0.1:7241"],
      });
    });
  const run = await checkEach("cluster-008", missedOnce("n1", extra));
  assert.deepEqual(run.transitions, [["firing n3"], [], []]);
  assert.deepEqual(run.firing, [`n3 since ${new Date(run.epochs[0]!).toISOString()}`]);
});

test("jetstream-014 stays firing with its first start while the short replica's server misses a scrape", async () => {
  // ORDERS (R3, leader n2): n3 holds 20,000 messages against 30,000 on n1 and n2.
  const run = await checkEach(
    "jetstream-014",
    missedOnce("n3", () => ordersReplicaCounts({ n1: 30_000, n2: 30_000, n3: 20_000 })),
  );
  assert.deepEqual(run.transitions, [["firing hub/APP/ORDERS"], [], []]);
  assert.deepEqual(run.firing, [`hub/APP/ORDERS since ${new Date(run.epochs[0]!).toISOString()}`]);
});

/** The first epoch of `code`'s own firing fixture (fixtures/index.ts), a plain list of replies. */
function firingFixture(code: string): ScrapeReply[] {
  const epoch = FIXTURES[code]!.fires()[0];
  assert.ok(epoch && Array.isArray(epoch), `${code} fires on a plain list of replies`);
  return [...(epoch as readonly ScrapeReply[])];
}

test("jetstream-001 stays firing with its first start while the stream's leader misses a scrape", async () => {
  // n3's copy of ORDERS is 20.8% behind its leader n2's; n3 answers, n2 does not.
  const run = await checkEach(
    "jetstream-001",
    missedOnce("n2", () => firingFixture("jetstream-001")),
  );
  assert.deepEqual(run.transitions, [["firing hub/APP/ORDERS@n3"], [], []]);
  assert.deepEqual(run.firing, [`hub/APP/ORDERS@n3 since ${new Date(run.epochs[0]!).toISOString()}`]);
});

test("consumer-002 stays firing with its first start while the consumer's leader misses a scrape", async () => {
  // proc's leader n1 reports its replica on n2 1001 entries behind; n2 answers, n1 does not.
  const run = await checkEach(
    "consumer-002",
    missedOnce("n1", () => firingFixture("consumer-002")),
  );
  assert.deepEqual(run.transitions, [["firing hub/APP/ORDERS/proc@n2"], [], []]);
  assert.deepEqual(run.firing, [`hub/APP/ORDERS/proc@n2 since ${new Date(run.epochs[0]!).toISOString()}`]);
});
