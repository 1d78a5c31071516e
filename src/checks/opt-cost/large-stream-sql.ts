/**
 * The shape opt-cost-002 (memory) and opt-cost-004 (uncompressed file) share: a stream whose
 * leader holds more than a threshold at its latest epoch of the window, with the
 * configuration in force then meeting `condition` (over `o`, hx.stream_opts). Narrowed on
 * hx.stream_stats alone (its bytes) before anything names it.
 */
import type { DetailColumn } from "../check.ts";
import { latestRowsCte, STREAM_NAME } from "../opt-idle/idle-streams-sql.ts";

/** The detail columns of both checks; `where` says where the bytes are held. */
export function largeStreamColumns(where: string): DetailColumn[] {
  return [
    { name: "bytes", type: "BIGINT", description: `Bytes the stream holds${where}, on each replica.` },
    { name: "replicas", type: "INTEGER", description: "Replicas, each holding those bytes." },
    { name: "max_bytes", type: "BIGINT", description: "The stream's byte limit; -1 when unlimited." },
  ];
}

/** The SELECT: `threshold` is the byte figure (SQL over the params) the stream holds more than. */
export function largeStreamSql(threshold: string, condition: string): string {
  return `
WITH ${latestRowsCte("latest", "hx.stream_stats", "stream_pk")}
SELECT d.epoch, d.stream_pk AS entity_pk, ${STREAM_NAME} AS entity_name, NULL::VARCHAR AS entity_key,
       l.name AS server, 'info' AS severity, CAST(d.bytes AS BIGINT) AS bytes,
       CAST(o.replicas AS INTEGER) AS replicas, CAST(o.max_bytes AS BIGINT) AS max_bytes
FROM latest d
JOIN hx.stream_ident si ON si.stream_pk = d.stream_pk
LEFT JOIN hx.server_ident l ON l.server_pk = d.leader_server_pk
ASOF JOIN hx.stream_opts o ON o.stream_pk = d.stream_pk AND d.epoch >= o.epoch
WHERE d.bytes > ${threshold} AND ${condition}`;
}
