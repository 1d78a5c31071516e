/**
 * The views find an entity's configuration in force by the range of epochs each _opts row
 * holds (from its epoch to the next row's), not by an ASOF join. DuckDB pushes a constant
 * filter on epoch through both, but a filter it only knows as the query runs (`epoch =
 * (SELECT max(epoch) FROM hx.epochs)`, a join with another table's epochs) reaches the
 * scans through a hash join and not through an ASOF join: with ASOF, such a query joined
 * every epoch the catalog keeps with its configuration before filtering (seconds to minutes
 * at full retention, against milliseconds).
 *
 * A range join pairs each row with every _opts row of its entity before keeping the one in
 * force, so it costs the rows times the entity's configurations. Configurations change when
 * someone changes them, so that stays small, except for connections: a connection's _opts row
 * lists its subjects, and a client subscribing per request or per entity changes them every
 * epoch (measured: 20 such connections over 92,160 epochs made a scan of every epoch take
 * 232 s, against 3.8 s with ASOF). hx.connections keeps its ASOF join on hx.connection_opts;
 * hx.closed_connections takes the range join, as a connection closes once.
 *
 * The views are rewritten from their stored definitions, so each keeps everything earlier
 * migrations gave it; their comments are set again, as a view recreated loses them. The
 * rewrite refuses a view whose columns it would change.
 */
import type { DuckDBConnection } from "@duckdb/node-api";
import { rewriteStoredViews } from "./view-rewrite.ts";

/** Views keeping their ASOF join on an _opts table whose rows can change every epoch. */
const KEEP_ASOF: ReadonlySet<string> = new Set(["connections.connection_opts"]);

/** The column each rewritten join adds to its _opts rows, left out of the view's columns. */
const UNTIL = "in_force_until";

/** `ASOF LEFT JOIN hx.T AS a ON (((a.pk = left.key) AND (left.epoch >= a.epoch)))`, as DuckDB stores it. */
const ASOF_OPTS =
  /ASOF LEFT JOIN hx\.(\w+_opts) AS (\w+) ON \(\(\((\w+)\.(\w+) = (\w+\.\w+)\) AND \((\w+)\.epoch >= (\w+)\.epoch\)\)\)/g;

/** Rewrites the ASOF joins of `sql` (one view's definition); returns it unchanged when it has none. */
export function rangeJoins(view: string, sql: string): string {
  const aliases: string[] = [];
  let body = sql.replace(
    ASOF_OPTS,
    (
      whole,
      table: string,
      alias: string,
      keyAlias: string,
      pk: string,
      key: string,
      left: string,
      right: string,
    ) => {
      if (keyAlias !== alias || right !== alias)
        throw new Error(`hx.${view}: unexpected join on ${table}: ${whole}`);
      if (KEEP_ASOF.has(`${view}.${table}`)) return whole;
      aliases.push(alias);
      return (
        `LEFT JOIN (SELECT *, COALESCE(lead(epoch) OVER (PARTITION BY ${pk} ORDER BY epoch), 'infinity'::TIMESTAMPTZ) AS ${UNTIL} FROM hx.${table}) AS ${alias} ` +
        `ON ${alias}.${pk} = ${key} AND ${left}.epoch >= ${alias}.epoch AND ${left}.epoch < ${alias}.${UNTIL}`
      );
    },
  );
  for (const alias of aliases) {
    if (new RegExp(`\\b${alias}\\.\\*(?! EXCLUDE \\()`).test(body))
      throw new Error(`hx.${view}: ${alias}.* without EXCLUDE would show ${UNTIL}`);
    body = body.replaceAll(`${alias}.* EXCLUDE (`, `${alias}.* EXCLUDE (${UNTIL}, `);
  }
  if (/\bASOF\b/.test(body.replace(ASOF_OPTS, "")))
    throw new Error(`hx.${view}: an ASOF join this migration does not know`);
  return body;
}

export const migration = {
  version: 37,
  name: "views find the configuration in force by its range of epochs, so a filter on epoch known only as the query runs reaches their scans",
  sql: "",
  run: (con: DuckDBConnection) => rewriteStoredViews(con, rangeJoins),
};
