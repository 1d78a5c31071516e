/**
 * Checks over a backlog: while newer epochs wait, the node folds every epoch but runs the
 * checks on the newest only (commit-handler). A change in a skipped epoch must still show on
 * the next checked epoch: the change checks compare with the epoch the checks last ran over,
 * not with the epoch folded just before.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { runEpochChecks, type Catalog } from "../../../src/catalog/index.ts";
import { CHECKS, findingsSelectSql } from "../../../src/checks/index.ts";
import { labReplies } from "../catalog/lab-epoch.ts";
import { catalogWith } from "./check-harness.ts";
import { edit, restarted, without } from "./fixtures/server.ts";

const statements = CHECKS.filter((c) => c.code === "server-008" || c.code === "server-004").map((c) => ({
  code: c.code,
  sql: findingsSelectSql(c, {}),
  disabled: false,
}));

/** `code entity_name` of the findings of checking `epoch` through the engine. */
async function check(catalog: Catalog, epoch: string): Promise<string[]> {
  const result = await runEpochChecks(catalog, epoch, statements);
  assert.ok(result?.ran, `checks ran over ${epoch}`);
  assert.deepEqual(result.failed, []);
  return result.findings.map((f) => `${f.code} ${f.entityName}`).sort();
}

test("a restart in an epoch the checks skipped fires server-008 on the next checked epoch, once", async () => {
  const back = "2026-11-22T11:05:00Z";
  await using lab = await catalogWith([
    labReplies(),
    without("n3"),
    restarted("n3", back), // folded, not checked: newer epochs were waiting
    restarted("n3", back),
    restarted("n3", back),
  ]);
  const [e0, e1, , e3, e4] = lab.epochs;
  assert.deepEqual(await check(lab.catalog, e0!), []);
  assert.deepEqual(await check(lab.catalog, e1!), []);
  assert.deepEqual(await check(lab.catalog, e3!), ["server-008 n3"]);
  assert.deepEqual(await check(lab.catalog, e4!), [], "the next checked epoch compares with e3: resolved");
});

test("a counter that grew in a skipped epoch is counted on the next checked epoch (server-004)", async () => {
  const slow = (n: number) => edit("varz", "n1", (v) => (v.slow_consumers = n));
  await using lab = await catalogWith([slow(0), slow(3), slow(3)]);
  const [e0, , e2] = lab.epochs;
  assert.deepEqual(await check(lab.catalog, e0!), []);
  assert.deepEqual(await check(lab.catalog, e2!), ["server-004 n1"]);
});
