/**
 * Older history for a fixture's catalog, and what a query reads: for the tests that show a
 * query reads the epochs it is about, not every epoch the catalog keeps. The fixture's
 * figures are copied 400, 800, … days earlier (every timestamp moved, as if the system had
 * been monitored then too: older than any window and any retention); what the query returns
 * must not change, and the rows its scans read from the per-epoch tables, as DuckDB's
 * EXPLAIN ANALYZE counts them, must not grow with the copies.
 */
import type { Catalog } from "../../../src/catalog/index.ts";
import { rowsReadByTable } from "../../harness/plan-rows.ts";

/** Tables that gain rows with every epoch, or with every close, and whose reads are checked. */
const PER_EPOCH = /^(\w+_stats|connection_closes|check_findings)$/;
/** Tables with one row an epoch: added to as well, but not checked. */
const EPOCH_LISTS = ["epochs", "check_runs"];

/**
 * Copies of the fixture's figures before each measured run. A scan bounded only by a join
 * reads at least one row more for each copy; DuckDB planning the two runs differently (its
 * estimates change with the table sizes) changes what a bounded scan reads by at most the
 * fixture's own rows, far fewer than the copies added between the runs.
 */
export const SOME = 24;
export const MORE = 120;

export interface Measured {
  /** What the query returned, as JSON. */
  readonly rows: string;
  /** Rows its scans read from each per-epoch table. */
  readonly read: Record<string, number>;
}

/**
 * Runs `sql` with `params` and counts what its scans read. `runtimeFilters: false` counts
 * them without the bounds DuckDB derives from a join's other side as it runs: whether it
 * does depends on the plan it picks for the table sizes at hand, and on a large catalog it
 * did not for some queries; a query whose bounds it states must be bounded without them.
 */
export function measured(
  catalog: Catalog,
  sql: string,
  params: readonly string[],
  options: { runtimeFilters: boolean },
): Promise<Measured> {
  return catalog.withReader(async (con) => {
    const result = (await con.runAndReadAll(`${sql} ORDER BY ALL`, [...params])).getRowsJS();
    if (!options.runtimeFilters) await con.run("SET disabled_optimizers = 'join_filter_pushdown'");
    const plan = await con
      .runAndReadAll(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, [...params])
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

/** The tables whose reads grew by a row for each copy added between `some` and `more`. */
export function grownReads(some: Measured, more: Measured, exempt?: string): string[] {
  return Object.keys({ ...some.read, ...more.read }).filter(
    (table) => table !== exempt && (more.read[table] ?? 0) - (some.read[table] ?? 0) >= MORE - SOME,
  );
}

/**
 * Adds copies `first` to `last` of the fixture's rows of every per-epoch table (the rows
 * after the fixture's last epoch minus 100 days), the k-th with each timestamp moved k × 400
 * days earlier.
 */
export async function addOlderHistory(catalog: Catalog, first: number, last: number): Promise<void> {
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
