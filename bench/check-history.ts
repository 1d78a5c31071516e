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
import type { DuckDBConnection } from "@duckdb/node-api";
import { median } from "./simulated-epochs.ts";

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

/** The catalog's latest epoch, as text for a TIMESTAMPTZ parameter. */
async function latestEpoch(con: DuckDBConnection): Promise<string> {
  return (await con.runAndReadAll("SELECT max(epoch)::VARCHAR FROM hx.epochs")).getRowsJS()[0]?.[0] as string;
}

/** `SELECT count(*) …` run 3 times: the count, and the median time. */
async function timedCount(
  con: DuckDBConnection,
  sql: string,
  params: string[],
): Promise<{ rows: number; ms: number }> {
  const runs: number[] = [];
  let rows = 0;
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    rows = Number((await con.runAndReadAll(sql, params)).getRowsJS()[0]?.[0]);
    runs.push(performance.now() - t0);
  }
  return { rows, ms: median(runs) };
}

/** How long reading one view at the latest epoch took, by a subquery and by a parameter. */
export interface ViewTiming {
  readonly view: string;
  readonly rows: number;
  readonly subqueryMs: number;
  readonly parameterMs: number;
}

/**
 * Each hx view with an epoch column read at the catalog's latest epoch, named by a subquery
 * (`epoch = (SELECT max(epoch) FROM hx.epochs)`, which DuckDB learns only as the query runs)
 * and by a parameter (pushed into the scans when the query is planned); the median of 3 each.
 */
export async function viewTimings(catalog: Catalog): Promise<ViewTiming[]> {
  return catalog.withReader(async (con) => {
    const views = (
      await con.runAndReadAll(
        `SELECT v.view_name FROM duckdb_views() v
         WHERE v.schema_name = 'hx' AND NOT v.internal
           AND EXISTS (SELECT 1 FROM duckdb_columns() c
                       WHERE c.schema_name = 'hx' AND c.table_name = v.view_name AND c.column_name = 'epoch')
         ORDER BY 1`,
      )
    )
      .getRowsJS()
      .map((r) => r[0] as string);
    const latest = await latestEpoch(con);
    const timed = (sql: string, params: string[]) => timedCount(con, sql, params);
    const timings: ViewTiming[] = [];
    for (const view of views) {
      const bySubquery = await timed(
        `SELECT count(*) FROM hx.${view} WHERE epoch = (SELECT max(epoch) FROM hx.epochs)`,
        [],
      );
      const byParameter = await timed(`SELECT count(*) FROM hx.${view} WHERE epoch = $1::TIMESTAMPTZ`, [
        latest,
      ]);
      timings.push({ view, rows: bySubquery.rows, subqueryMs: bySubquery.ms, parameterMs: byParameter.ms });
    }
    return timings;
  });
}

/** How long a context macro took for one entity, with its default window and with ep_to given. */
export interface ContextTiming {
  readonly call: string;
  readonly rows: number;
  readonly latestMs: number;
  readonly parameterMs: number;
}

/**
 * Each entity context macro (contexts.*_history) for the first entity of its kind at the
 * latest epoch, over its default hour: ending at the latest epoch (its default, which DuckDB
 * learns only as the query runs) and at `ep_to` given as a parameter; the median of 3 each.
 */
export async function contextTimings(catalog: Catalog): Promise<ContextTiming[]> {
  return catalog.withReader(async (con) => {
    const latest = await latestEpoch(con);
    const timings: ContextTiming[] = [];
    for (const [macro, view, pk] of [
      ["server_history", "servers", "server_pk"],
      ["stream_history", "streams", "stream_pk"],
      ["consumer_history", "consumers", "consumer_pk"],
    ]) {
      const first = (
        await con.runAndReadAll(`SELECT min(${pk}) FROM hx.${view} WHERE epoch = $1::TIMESTAMPTZ`, [latest])
      ).getRowsJS()[0]?.[0];
      if (first === null || first === undefined) continue;
      const call = `contexts.${macro}(${Number(first)}`;
      const byDefault = await timedCount(con, `SELECT count(*) FROM ${call})`, []);
      const byParameter = await timedCount(con, `SELECT count(*) FROM ${call}, ep_to := $1::TIMESTAMPTZ)`, [
        latest,
      ]);
      timings.push({
        call: `${call})`,
        rows: byDefault.rows,
        latestMs: byDefault.ms,
        parameterMs: byParameter.ms,
      });
    }
    return timings;
  });
}
