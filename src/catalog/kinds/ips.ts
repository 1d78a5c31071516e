/**
 * main.ips: one row per client address ever seen. Upserted set-based in the fold's
 * transaction: the epoch's addresses go in as one list parameter, one per connection, and
 * as another whether the fold saw that connection for the first time (it knows, as it gave
 * it its identity). Needing nothing the fold appends, the upsert runs in DuckDB while
 * the fold fills its DataChunks. main.ips is outside hx, so it is not among the table
 * shapes the Appender writes.
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
SELECT ip, $3, $3, sum(fresh)
FROM (SELECT unnest($1::VARCHAR[]) AS ip, unnest($2::INTEGER[]) AS fresh)
GROUP BY ip
ON CONFLICT (ip) DO UPDATE SET
  last_epoch = greatest(ips.last_epoch, excluded.last_epoch),
  connections = ips.connections + excluded.connections`;

/**
 * Starts the epoch's upsert and resolves once DuckDB is executing it, with `done` settling
 * when it has. The statement is prepared and bound here, on this thread, so that nothing of
 * it is left waiting for this thread while the fold fills its chunks.
 */
export async function startIpsUpsert(
  con: DuckDBConnection,
  epoch: DuckDBTimestampTZValue,
  seen: ConnectionSightings,
): Promise<{ readonly done: Promise<void> }> {
  if (seen.ips.length === 0) return { done: Promise.resolve() };
  const prepared = await con.prepare(UPSERT);
  try {
    prepared.bind(
      [listValue(seen.ips), listValue(seen.fresh), epoch],
      [LIST(VARCHAR), LIST(INTEGER), TIMESTAMPTZ],
    );
  } catch (err) {
    prepared.destroySync();
    throw err;
  }
  const done = prepared.run().then(
    () => prepared.destroySync(),
    (err: unknown) => {
      prepared.destroySync();
      throw err;
    },
  );
  return { done };
}
