/**
 * The shape opt-cost-003 (memory) and opt-cost-005 (file storage) share: a server whose
 * JetStream reservation is mostly unused.
 *
 * JSZ `reserved_memory` / `reserved_storage` is what the server has set aside for the
 * streams it holds: the sum of the `max_bytes` of its memory (or file) stream replicas
 * (nats-server reserveStreamResources). A stream without max_bytes reserves nothing, so a
 * server whose streams set no byte limit reserves 0 and is not judged; 2^64−1 ("unlimited")
 * is not judged either. Use is what the reserving streams hold: the bytes of the server's
 * own replicas of its memory (or file) streams with a max_bytes, summed per epoch, at their
 * peak over the window (a reservation that was needed at some point of the range is not
 * wasted), compared with the reservation at the server's latest epoch of the window. The
 * server's JSZ `memory` / `storage` would also count streams without a byte limit, which
 * reserve nothing, and hide a wasted reservation beside them.
 */
import type { DetailColumn } from "../check.ts";

export type Storage = "memory" | "storage";

/** The detail columns of both checks. */
export function reservationColumns(what: string): DetailColumn[] {
  return [
    {
      name: "reserved_bytes",
      type: "BIGINT",
      description: `JetStream ${what} reserved on the server by its streams' byte limits.`,
    },
    {
      name: "peak_used_bytes",
      type: "BIGINT",
      description: `Most JetStream ${what} the reserving streams (those with a max_bytes) held on the server over the range, bytes.`,
    },
    {
      name: "utilization_percent",
      type: "DOUBLE",
      description: "peak_used_bytes as a percentage of reserved_bytes.",
    },
  ];
}

/**
 * The check's SELECT: the reservation from hx.server_stats `js_reserved_<storage>`, the use
 * from the server's replicas of the reserving streams (hx.stream_replica_stats, with the
 * stream's storage and max_bytes in force at each epoch).
 */
export function reservationSql(storage: Storage): string {
  const reserved = `s.js_reserved_${storage}`;
  const kind = storage === "memory" ? "memory" : "file";
  return `
WITH reserving AS (
  SELECT * FROM (
    SELECT s.server_pk, max(s.epoch) AS epoch, CAST(arg_max(${reserved}, s.epoch) AS DOUBLE) AS reserved
    FROM hx.server_stats s
    WHERE s.epoch BETWEEN ep_from AND ep_to AND ${reserved} IS NOT NULL
    GROUP BY s.server_pk)
  WHERE reserved > 0 AND reserved < 9223372036854775808.0
), used AS (
  SELECT r.epoch, ri.server_pk, sum(coalesce(r.bytes, 0)) AS bytes
  FROM hx.stream_replica_stats r
  JOIN hx.stream_replica_ident ri ON ri.stream_replica_pk = r.stream_replica_pk
  ASOF JOIN hx.stream_opts o ON o.stream_pk = ri.stream_pk AND r.epoch >= o.epoch
  WHERE r.epoch BETWEEN ep_from AND ep_to AND ri.server_pk IN (SELECT server_pk FROM reserving)
    AND o.storage = '${kind}' AND o.max_bytes > 0
  GROUP BY r.epoch, ri.server_pk
), peaks AS (
  SELECT v.server_pk, v.epoch, v.reserved, coalesce(max(u.bytes), 0) AS peak_used
  FROM reserving v
  LEFT JOIN used u ON u.server_pk = v.server_pk
  GROUP BY v.server_pk, v.epoch, v.reserved
), judged AS (
  SELECT * FROM peaks WHERE peak_used * 100.0 < p_min_utilization_percent * reserved
)
SELECT j.epoch, j.server_pk AS entity_pk, i.name AS entity_name, NULL::VARCHAR AS entity_key,
       i.name AS server, 'info' AS severity, CAST(j.reserved AS BIGINT) AS reserved_bytes,
       CAST(j.peak_used AS BIGINT) AS peak_used_bytes,
       CAST(100.0 * j.peak_used / j.reserved AS DOUBLE) AS utilization_percent
FROM judged j
JOIN hx.server_ident i ON i.server_pk = j.server_pk`;
}
