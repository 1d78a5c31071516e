/**
 * A check reads the figures of the epochs it is about, not every epoch the catalog keeps. Each
 * check runs over its firing fixture in a real catalog, then with copies of the fixture's
 * figures added 400, 800, … days earlier (every timestamp moved, as if the system had been
 * monitored then too: older than any check's window and any retention), 24 copies and then
 * 120. What it returns must not change, and the rows its scans read from the per-epoch tables,
 * as DuckDB's EXPLAIN ANALYZE counts them, must not grow with the copies.
 *
 * A scan of one of those tables bounded only by a join, not by the epochs the check is about,
 * read the whole retention at every epoch: on a small system with the default retention
 * (768h of 30 s epochs) accounts-006 took 1.2 s an epoch and jetstream-014 0.4 s. `hx.epochs`
 * and `hx.check_runs` (one row an epoch) may be read whole: the epoch before a window is
 * wherever it is.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Catalog } from "../../../src/catalog/index.ts";
import { CHECKS, macroName, type Check } from "../../../src/checks/index.ts";
import { catalogWith } from "./check-harness.ts";
import { FIXTURES } from "./fixtures/index.ts";
import { addOlderHistory, grownReads, measured, MORE, SOME, type Measured } from "./older-history.ts";

/** What the check returns over [from, to] and the rows its scans read, without runtime filters. */
function runMeasured(
  catalog: Catalog,
  check: Check,
  from: string,
  to: string,
  params: Readonly<Record<string, number>>,
): Promise<Measured> {
  const named = Object.entries(params).map(([k, v]) => `, ${k} := ${v}`);
  const sql = `SELECT * FROM ${macroName(check.code)}($1::TIMESTAMPTZ, $2::TIMESTAMPTZ${named.join("")})`;
  return measured(catalog, sql, [from, to], { runtimeFilters: false });
}

/**
 * Checks that read one entity's whole history on purpose, and the table they read it from:
 * when a link that is down was last up, so that a link down for days still names it. Through
 * the engine they read it once, the first epoch the link is judged lost, and then carry it
 * from the run before's finding (link-history.test.ts); run here without stored findings,
 * they read it every time. (cluster-007 reads it from the link's rows, which carry it.)
 */
const WHOLE_HISTORY: Readonly<Record<string, string>> = {
  "leaf-004": "leafnode_stats",
};

test("every check reads the same rows, and finds the same, however much older history the catalog holds", async () => {
  const grown: string[] = [];
  for (const check of CHECKS) {
    const fixture = FIXTURES[check.code];
    assert.ok(fixture, `no fixture for ${check.code}`);
    await using lab = await catalogWith(fixture.fires());
    const to = lab.epochs.at(-1)!;
    const from = check.optimization ? lab.epochs[0]! : to;
    const params = fixture.params ?? {};
    const found = (await runMeasured(lab.catalog, check, from, to, params)).rows;
    // Much older history first, so that DuckDB plans both measured runs alike: with little,
    // its estimates differ and so may the order of its joins (and the rows each scan gives).
    await addOlderHistory(lab.catalog, 1, SOME);
    const some = await runMeasured(lab.catalog, check, from, to, params);
    await addOlderHistory(lab.catalog, SOME + 1, MORE);
    const more = await runMeasured(lab.catalog, check, from, to, params);
    assert.equal(some.rows, found, `${check.code}: older history changed what it finds`);
    assert.equal(more.rows, found, `${check.code}: older history changed what it finds`);
    if (grownReads(some, more, WHOLE_HISTORY[check.code]).length > 0)
      grown.push(`${check.code}: read ${JSON.stringify(some.read)}, then ${JSON.stringify(more.read)}`);
  }
  assert.deepEqual(grown, [], "checks whose reads grew with the catalog's older history");
});
