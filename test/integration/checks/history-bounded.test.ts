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
import { rowsReadByTable } from "../../harness/plan-rows.ts";
import { catalogWith } from "./check-harness.ts";
import { FIXTURES } from "./fixtures/index.ts";

/** Tables that gain rows with every epoch, or with every close, and whose reads are checked. */
const PER_EPOCH = /^(\w+_stats|connection_closes|check_findings)$/;
/** Tables with one row an epoch: added to as well, but not checked. */
const EPOCH_LISTS = ["epochs", "check_runs"];

/** What the check returns over [from, to] and the rows its scans read. */
async function runMeasured(
  catalog: Catalog,
  check: Check,
  from: string,
  to: string,
  params: Readonly<Record<string, number>>,
): Promise<{ rows: string; read: Record<string, number> }> {
  const named = Object.entries(params).map(([k, v]) => `, ${k} := ${v}`);
  const sql = `SELECT * FROM ${macroName(check.code)}($1::TIMESTAMPTZ, $2::TIMESTAMPTZ${named.join("")})`;
  return catalog.withReader(async (con) => {
    const result = (await con.runAndReadAll(`${sql} ORDER BY ALL`, [from, to])).getRowsJS();
    // Without the bounds DuckDB derives from a join's other side as it runs: whether it does
    // depends on the plan it picks for the table sizes at hand, and on a large catalog it
    // did not for some checks. Their scans must be bounded by what they say.
    await con.run("SET disabled_optimizers = 'join_filter_pushdown'");
    const plan = await con
      .runAndReadAll(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, [from, to])
      .then((r) => r.getRowsJS())
      .finally(() => con.run("RESET disabled_optimizers"));
    const read = new Map(
      [...rowsReadByTable(plan[0]?.[1] as string)].filter(([table]) => PER_EPOCH.test(table)),
    );
    return {
      rows: JSON.stringify(result, (_, v: unknown) => (typeof v === "bigint" ? v.toString() : v)),
      read: Object.fromEntries([...read].sort()),
    };
  });
}

/**
 * Adds copies `first` to `last` of the fixture's rows of every per-epoch table (the rows
 * after the fixture's last epoch minus 100 days), the k-th with each timestamp moved k × 400
 * days earlier.
 */
async function addOlderHistory(catalog: Catalog, first: number, last: number): Promise<void> {
  await catalog.withWriter(async ({ con }) => {
    const columns = (
      await con.runAndReadAll(
        `SELECT table_name, list(column_name ORDER BY column_index) FILTER (WHERE data_type LIKE 'TIMESTAMP%')
         FROM duckdb_columns() WHERE schema_name = 'hx'
           AND table_name IN (SELECT table_name FROM duckdb_tables() WHERE schema_name = 'hx')
         GROUP BY table_name HAVING list_contains(list(column_name), 'epoch')`,
      )
    ).getRowsJS() as [string, string[]][];
    for (const [table, timestamps] of columns) {
      if (!PER_EPOCH.test(table) && !EPOCH_LISTS.includes(table)) continue;
      const moved = timestamps.map((c) => `t.${c} - INTERVAL 400 DAY * r.k AS ${c}`);
      if (table === "epochs") moved.push("t.marker_seq + 1000000 * r.k AS marker_seq");
      await con.run(
        `INSERT INTO hx.${table} SELECT t.* REPLACE (${moved.join(", ")})
         FROM hx.${table} t, range(${first}, ${last + 1}) r(k)
         WHERE t.epoch > (SELECT max(epoch) FROM hx.epochs) - INTERVAL 100 DAY`,
      );
    }
  });
}

/**
 * Copies of the fixture's figures before each measured run. A scan bounded only by a join
 * reads at least one row more for each copy; DuckDB planning the two runs differently (its
 * estimates change with the table sizes) changes what a bounded scan reads by at most the
 * fixture's own rows, far fewer than the copies added between the runs.
 */
const SOME = 24;
const MORE = 120;

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
    const exempt = WHOLE_HISTORY[check.code];
    const differs = Object.keys({ ...some.read, ...more.read }).filter(
      (table) => table !== exempt && (more.read[table] ?? 0) - (some.read[table] ?? 0) >= MORE - SOME,
    );
    if (differs.length > 0)
      grown.push(`${check.code}: read ${JSON.stringify(some.read)}, then ${JSON.stringify(more.read)}`);
  }
  assert.deepEqual(grown, [], "checks whose reads grew with the catalog's older history");
});
