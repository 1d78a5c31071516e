/**
 * Each replica row carries the leader's figure it is compared with (hx.stream_replica_stats.
 * leader_last_seq, hx.consumer_replica_stats.leader_ack_floor_stream_seq), so hx.stream_replicas
 * and hx.consumer_replicas no longer join the leader's _stats rows of the same epoch.
 *
 * That join took the leader's rows of every epoch the catalog keeps as its build side when
 * the filter on epoch was known only as the query ran (`epoch = (SELECT max(epoch) FROM
 * hx.epochs)`): DuckDB pushed the filter into the replicas' scan but not into the leaders'
 * (measured on a medium system's catalog at 2,880 epochs: 141 ms and 532 ms for the latest
 * epoch, building from 5.8 M and 17.3 M rows; 32 times that at the default retention).
 *
 * The fold writes the figure from the leader's reply it trusts, the reply the leader's _stats
 * row is written from (kinds/replicas.ts); rows folded before are filled here from that row.
 * The views keep their columns.
 */
import type { DuckDBConnection } from "@duckdb/node-api";
import { quote } from "./ddl.ts";
import { inEpochBatches } from "./epoch-batches.ts";
import type { FillProgress } from "./index.ts";
import { rewriteStoredViews } from "./view-rewrite.ts";

interface LeaderFigure {
  readonly view: string;
  readonly stats: string;
  readonly ident: string;
  readonly pk: string;
  /** The asset's pk, in the replica's _ident and the leader's _stats. */
  readonly asset: string;
  readonly leader: string;
  readonly alias: string;
  readonly figure: string;
  readonly column: string;
  readonly comment: string;
}

export const LEADER_FIGURES: readonly LeaderFigure[] = [
  {
    view: "stream_replicas",
    stats: "stream_replica_stats",
    ident: "stream_replica_ident",
    pk: "stream_replica_pk",
    asset: "stream_pk",
    leader: "stream_stats",
    alias: "ls",
    figure: "last_seq",
    column: "leader_last_seq",
    comment:
      "The stream leader's last_seq at this epoch (hx.stream_stats.last_seq), which behind_leader_seq subtracts this replica's from; NULL without a trusted leader.",
  },
  {
    view: "consumer_replicas",
    stats: "consumer_replica_stats",
    ident: "consumer_replica_ident",
    pk: "consumer_replica_pk",
    asset: "consumer_pk",
    leader: "consumer_stats",
    alias: "lc",
    figure: "ack_floor_stream_seq",
    column: "leader_ack_floor_stream_seq",
    comment:
      "The consumer leader's ack floor (stream sequence) at this epoch (hx.consumer_stats.ack_floor_stream_seq), which behind_leader_ack_floor subtracts this replica's from; NULL without a trusted leader.",
  },
];

/** `s.* EXCLUDE (…)`, the replica's own columns (DuckDB stores the list in no set order). */
const OWN_COLUMNS = /\bs\.\* EXCLUDE \(([^)]*)\)/g;

/** A replica view's stored definition reading the leader's figure from its own row. */
export function figureFromRow(view: string, sql: string): string {
  const spec = LEADER_FIGURES.find((f) => f.view === view);
  if (!spec) return sql;
  const { alias, leader, asset, figure, column } = spec;
  const join = ` LEFT JOIN hx.${leader} AS ${alias} ON (((${alias}.${asset} = i.${asset}) AND (${alias}.epoch = s.epoch)))`;
  const difference = `(${alias}.${figure} - s.${figure})`;
  const own = [...sql.matchAll(OWN_COLUMNS)];
  if (sql.split(join).length !== 2 || sql.split(difference).length !== 2 || own.length !== 1)
    throw new Error(`hx.${view}: expected one${join}, one ${difference} and one s.* EXCLUDE (…): ${sql}`);
  const rewritten = sql
    .replace(join, "")
    .replace(difference, `(s.${column} - s.${figure})`)
    .replace(OWN_COLUMNS, (_whole, list: string) => `s.* EXCLUDE (${list}, ${column})`);
  if (new RegExp(`\\b${alias}\\.`).test(rewritten))
    throw new Error(`hx.${view}: the leader's row is read elsewhere too: ${sql}`);
  return rewritten;
}

/** The columns (again, should a node have stopped part way); `fillFigures` fills them. */
const COLUMNS = LEADER_FIGURES.flatMap((f) => [
  `ALTER TABLE hx.${f.stats} ADD COLUMN IF NOT EXISTS ${f.column} BIGINT;`,
  `COMMENT ON COLUMN hx.${f.stats}.${f.column} IS ${quote(f.comment)};`,
]).join("\n");

/** Each replica row gets its leader's figure of the same epoch, a range of epochs at a time. */
async function fillFigures(con: DuckDBConnection, progress: FillProgress): Promise<void> {
  for (const f of LEADER_FIGURES) {
    await inEpochBatches(
      con,
      f.stats,
      `UPDATE hx.${f.stats} AS s SET ${f.column} = l.${f.figure}
       FROM hx.${f.ident} AS i, hx.${f.leader} AS l
       WHERE i.${f.pk} = s.${f.pk} AND l.${f.asset} = i.${f.asset} AND l.epoch = s.epoch
         AND s.epoch BETWEEN $1::TIMESTAMPTZ AND $2::TIMESTAMPTZ
         AND l.epoch BETWEEN $1::TIMESTAMPTZ AND $2::TIMESTAMPTZ`,
      (done, total) => progress(`hx.${f.stats}.${f.column}`, done, total),
    );
  }
}

export const migration = {
  version: 39,
  name: "replica rows carry the leader's figure they are compared with, so the replica views join no leader rows",
  before: async (con: DuckDBConnection, progress: FillProgress) => {
    await con.run(COLUMNS);
    await fillFigures(con, progress);
  },
  sql: "",
  run: (con: DuckDBConnection) => rewriteStoredViews(con, figureFromRow),
};
