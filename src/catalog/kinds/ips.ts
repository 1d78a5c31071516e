/**
 * main.ips: one row per client address ever seen. Upserted set-based in the fold's
 * transaction, after the connection identities are appended: the epoch's (ip, pk) pairs
 * go in as two list parameters, and a connection counts as new when its identity was
 * first seen this epoch (a filter on first_epoch, which the table's zone maps answer
 * from the newest row groups only, so the cost follows the epoch, not the history).
 * main.ips is outside hx, so it is not among the table shapes the Appender writes.
 */
import {
  INTEGER,
  LIST,
  TIMESTAMPTZ,
  VARCHAR,
  listValue,
  type DuckDBConnection,
  type DuckDBTimestampTZValue,
} from "@duckdb/node-api";
import type { ConnectionSightings } from "./connections.ts";

const UPSERT = `
INSERT INTO main.ips (ip, first_epoch, last_epoch, connections)
SELECT seen.ip, $3, $3, count(fresh.connection_pk)
FROM (SELECT unnest($1::VARCHAR[]) AS ip, unnest($2::INTEGER[]) AS connection_pk) seen
LEFT JOIN (SELECT connection_pk FROM hx.connection_ident WHERE first_epoch = $3) fresh
  ON fresh.connection_pk = seen.connection_pk
GROUP BY seen.ip
ON CONFLICT (ip) DO UPDATE SET
  last_epoch = greatest(ips.last_epoch, excluded.last_epoch),
  connections = ips.connections + excluded.connections`;

export async function upsertIps(
  con: DuckDBConnection,
  epoch: DuckDBTimestampTZValue,
  seen: ConnectionSightings,
): Promise<void> {
  if (seen.ips.length === 0) return;
  await con.run(
    UPSERT,
    [listValue(seen.ips), listValue(seen.pks), epoch],
    [LIST(VARCHAR), LIST(INTEGER), TIMESTAMPTZ],
  );
}
