/**
 * Filling a new column of a per-epoch table, a range of epochs at a time, each range in a
 * transaction of its own when run outside one (Migration.before). One UPDATE over a whole
 * table joins all of its rows at once: under the default `db.memory-limit` (1GB) the join
 * spills, and filling 51 M replica rows took 401 s, against 10 s unbounded. A range of
 * epochs, bound on both sides of the join, keeps each join small; committing each range
 * frees the old and new values DuckDB holds until COMMIT (85 M replica rows: 23 s and 1.5 GB
 * resident in one transaction, 7.0 s and 1.2 GB in one per range).
 */
import type { DuckDBConnection } from "@duckdb/node-api";

/** Rows one batch takes at most (whole epochs: an epoch with more is a batch alone). */
export const BATCH_ROWS = 2_000_000;

/** Consecutive [first, last] epoch ranges of at most `batchRows` rows, from each epoch's row count. */
export function epochBatches(
  counts: readonly (readonly [epoch: string, rows: number])[],
  batchRows = BATCH_ROWS,
): [first: string, last: string][] {
  const batches: [string, string][] = [];
  let rows = 0;
  for (const [epoch, n] of counts) {
    const last = batches.at(-1);
    if (last && rows + n <= batchRows) {
      last[1] = epoch;
      rows += n;
    } else {
      batches.push([epoch, epoch]);
      rows = n;
    }
  }
  return batches;
}

/**
 * Runs `sql` once per batch of `hx.<table>`'s epochs, with the batch's first and last epoch
 * as `$1` and `$2` (TIMESTAMPTZ text with its offset: cast them with `::TIMESTAMPTZ`).
 * `progress` is told the batches done and their number, before the first and after each.
 */
export async function inEpochBatches(
  con: DuckDBConnection,
  table: string,
  sql: string,
  progress: (done: number, total: number) => void = () => undefined,
): Promise<void> {
  const counts = (
    await con.runAndReadAll(
      `SELECT epoch::VARCHAR, count(*)::INTEGER FROM hx.${table} GROUP BY epoch ORDER BY epoch`,
    )
  )
    .getRowsJS()
    .map(([epoch, n]) => {
      if (typeof epoch !== "string") throw new Error(`hx.${table}: an epoch read as ${typeof epoch}`);
      return [epoch, Number(n)] as const;
    });
  const batches = epochBatches(counts);
  progress(0, batches.length);
  for (const [i, [first, last]] of batches.entries()) {
    await con.run(sql, [first, last]);
    progress(i + 1, batches.length);
  }
}
