/**
 * Checks whose finding is a figure over several servers (a sum over the meta group) when one
 * server the figure depends on misses a scrape: run through the engine (runEpochChecks on a
 * real catalog) and the findings diff as the catalog side runs them, a finding stays firing
 * with its first start time.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { runEpochChecks, type ScrapeReply } from "../../../src/catalog/index.ts";
import { CHECKS, findingsSelectSql, type Check } from "../../../src/checks/index.ts";
import type { FiringFinding } from "../../../src/domain/index.ts";
import { diffFindings } from "../../../src/findings/index.ts";
import { catalogWith, type FixtureEpoch } from "./check-harness.ts";
import { everyMeta } from "./fixtures/meta.ts";
import { without } from "./fixtures/server.ts";

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

test("meta-005 stays firing with its first start while a server holding replicas misses a scrape", async () => {
  // The hub holds 30 stream and consumer replicas, 9 of them on n2; the meta leader n1 answers.
  const run = await checkEach(
    "meta-005",
    missedOnce("n2", () => everyMeta(() => {})),
    { p_max_assets: 28 },
  );
  assert.deepEqual(run.transitions, [["firing east"], [], []]);
  assert.deepEqual(run.firing, [`east since ${new Date(run.epochs[0]!).toISOString()}`]);
});

test("meta-002 stays firing with its first start while the second claimant misses a scrape", async () => {
  const run = await checkEach(
    "meta-002",
    missedOnce("n2", () => everyMeta((meta, server) => server === "n2" && (meta.leader = "n2"))),
  );
  assert.deepEqual(run.transitions, [["firing east"], [], []]);
  assert.deepEqual(run.firing, [`east since ${new Date(run.epochs[0]!).toISOString()}`]);
});
