/**
 * hx.connection_stats rows name the hx.connection_opts row in force (`opts_epoch`), and
 * hx.connections joins it by equality. Migration 37 left hx.connections on its ASOF join: a
 * connection can change its configuration every epoch (its subjects), which made the range
 * join cost the rows times their configurations. An ASOF join, though, keeps a filter on
 * epoch known only as the query runs (`epoch = (SELECT max(epoch) FROM hx.epochs)`) from
 * reaching the scans: such a query read every epoch the catalog keeps. An equality join
 * costs neither: the filter reaches the _stats scan, and each row meets one _opts row.
 *
 * The fold writes `opts_epoch` from the key cache, which knows each entity's latest _opts
 * row (FoldContext.stats). Rows folded before are filled here from the ASOF join they were
 * shown with, so the view shows what it showed. Retention keeps the _opts row in force at
 * its cutoff, so a kept row's `opts_epoch` always names a kept row.
 */
import type { DuckDBConnection } from "@duckdb/node-api";
import { quote } from "./ddl.ts";
import { inEpochBatches } from "./epoch-batches.ts";
import type { FillProgress } from "./index.ts";
import { rewriteStoredViews } from "./view-rewrite.ts";

/** The join migration 37 kept, as DuckDB stores it, and what replaces it. */
const ASOF_JOIN =
  "ASOF LEFT JOIN hx.connection_opts AS o ON (((o.connection_pk = s.connection_pk) AND (s.epoch >= o.epoch)))";
const EQUALITY_JOIN =
  "LEFT JOIN hx.connection_opts AS o ON o.connection_pk = s.connection_pk AND o.epoch = s.opts_epoch";
/**
 * The view's _stats columns, `s.* EXCLUDE (…)` (DuckDB stores the list in no set order): the
 * new column goes in the list, so the view's columns do not change.
 */
const STATS_COLUMNS = /\bs\.\* EXCLUDE \(([^)]*)\)/g;

/** hx.connections' stored definition with the equality join; other views unchanged. */
export function equalityJoin(view: string, sql: string): string {
  if (view !== "connections") return sql;
  const stats = [...sql.matchAll(STATS_COLUMNS)];
  if (sql.split(ASOF_JOIN).length !== 2 || stats.length !== 1)
    throw new Error(
      `hx.connections: expected one ${ASOF_JOIN} and one s.* EXCLUDE (…) in its definition: ${sql}`,
    );
  return sql
    .replace(ASOF_JOIN, EQUALITY_JOIN)
    .replace(STATS_COLUMNS, (_whole, list: string) => `s.* EXCLUDE (${list}, opts_epoch)`);
}

/** The column (again, should a node have stopped part way); `fillOptsEpoch` fills it. */
const COLUMN = [
  "ALTER TABLE hx.connection_stats ADD COLUMN IF NOT EXISTS opts_epoch TIMESTAMPTZ;",
  `COMMENT ON COLUMN hx.connection_stats.opts_epoch IS ${quote(
    "Epoch of the hx.connection_opts row in force at this epoch (what the connection was then); NULL when none was recorded.",
  )};`,
].join("\n");

/**
 * Each row gets the _opts row an ASOF join finds, what hx.connections showed, a range of
 * epochs at a time (measured under a 1GB memory limit, 46 M rows: 3.0 s, against 7.1 s in one
 * UPDATE; with 20 connections changing subjects every epoch, 17 s against 80 s).
 */
function fillOptsEpoch(con: DuckDBConnection, progress: FillProgress): Promise<void> {
  return inEpochBatches(
    con,
    "connection_stats",
    `UPDATE hx.connection_stats AS s SET opts_epoch = f.opts_epoch
     FROM (SELECT x.connection_pk, x.epoch, o.epoch AS opts_epoch
           FROM hx.connection_stats AS x
           ASOF JOIN hx.connection_opts AS o ON o.connection_pk = x.connection_pk AND x.epoch >= o.epoch
           WHERE x.epoch BETWEEN $1::TIMESTAMPTZ AND $2::TIMESTAMPTZ) AS f
     WHERE f.connection_pk = s.connection_pk AND f.epoch = s.epoch
       AND s.epoch BETWEEN $1::TIMESTAMPTZ AND $2::TIMESTAMPTZ`,
    (done, total) => progress("hx.connection_stats.opts_epoch", done, total),
  );
}

export const migration = {
  version: 38,
  name: "hx.connection_stats.opts_epoch names the configuration in force, which hx.connections joins by equality",
  before: async (con: DuckDBConnection, progress: FillProgress) => {
    await con.run(COLUMN);
    await fillOptsEpoch(con, progress);
  },
  sql: "",
  run: (con: DuckDBConnection) => rewriteStoredViews(con, equalityJoin),
};
