/**
 * bench:checks with BENCH_CHECK_HISTORY: the catalog's per-epoch tables grown to that many
 * epochs, as a node holds them after running for its retention (768h of 30 s epochs is
 * 92,160), for one more epoch to be folded and checked on top. The simulated epochs' rows are
 * copied back in time, one minute an epoch as they were gathered, in epoch order as folds
 * append them (DuckDB's zone maps then skip what a check does not read, as on a real
 * catalog).
 */
import {
  runEpochChecks,
  type Catalog,
  type CheckStatement,
  type EpochCheckResult,
} from "../src/catalog/index.ts";

/** Tables gaining rows with every epoch (their `_ident` and `_opts` rows are written once or on change). */
const PER_EPOCH = /^(\w+_stats|epochs|check_runs|check_findings)$/;

/** Grows the per-epoch tables to about `epochs` epochs; returns how many the catalog holds. */
export async function growHistory(
  catalog: Catalog,
  folded: readonly string[],
  epochs: number,
): Promise<number> {
  const copies = Math.max(0, Math.ceil(epochs / folded.length) - 1);
  return catalog.withWriter(async ({ con }) => {
    const tables = (
      await con.runAndReadAll(
        `SELECT table_name FROM duckdb_columns() WHERE schema_name = 'hx' AND column_name = 'epoch'
           AND table_name IN (SELECT table_name FROM duckdb_tables() WHERE schema_name = 'hx')`,
      )
    )
      .getRowsJS()
      .map((r) => r[0] as string)
      .filter((t) => PER_EPOCH.test(t));
    for (const table of tables) {
      const moved = [`t.epoch - to_minutes(${folded.length} * r.k) AS epoch`];
      if (table === "epochs") moved.push("t.marker_seq + 1000000000 * r.k AS marker_seq");
      await con.run(`CREATE OR REPLACE TEMP TABLE history_rows AS SELECT * FROM hx.${table}`);
      await con.run(`DELETE FROM hx.${table}`);
      await con.run(
        `INSERT INTO hx.${table} SELECT * FROM (
           SELECT t.* REPLACE (${moved.join(", ")}) FROM history_rows t, range(0, ${copies + 1}) r(k)
         ) ORDER BY epoch`,
      );
    }
    await con.run("DROP TABLE history_rows");
    await con.run("CHECKPOINT");
    return Number((await con.runAndReadAll("SELECT count(*) FROM hx.epochs")).getRowsJS()[0]?.[0]);
  });
}

/** The checks over `epoch` run again `runs` times (its check run forgotten before each). */
export async function checkAgain(
  catalog: Catalog,
  epoch: string,
  statements: readonly CheckStatement[],
  runs: number,
): Promise<EpochCheckResult[]> {
  const results: EpochCheckResult[] = [];
  for (let i = 0; i < runs; i++) {
    await catalog.withWriter(({ con }) =>
      con.run("DELETE FROM hx.check_runs WHERE epoch = $1::TIMESTAMPTZ", [epoch]),
    );
    const result = await runEpochChecks(catalog, epoch, statements);
    if (!result) throw new Error(`epoch ${epoch} is not in the catalog`);
    results.push(result);
  }
  return results;
}
