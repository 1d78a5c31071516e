/**
 * The shape opt-cost-003 (memory) and opt-cost-005 (file storage) share: a server whose
 * JetStream reservation is mostly unused.
 *
 * JSZ `reserved_memory` / `reserved_storage` is what the server has set aside for the
 * streams it holds: the sum of the `max_bytes` of its memory (or file) stream replicas
 * (nats-server reserveStreamResources). A stream without max_bytes reserves nothing, so a
 * server whose streams set no byte limit reserves 0 and is not judged; 2^64−1 ("unlimited")
 * is not judged either. Use is the peak of JSZ `memory` / `storage` over every epoch of the
 * window (a reservation that was needed at some point of the range is not wasted), compared
 * with the reservation at the server's latest epoch of the window.
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
      description: `Most JetStream ${what} the server used over the range, bytes.`,
    },
    {
      name: "utilization_percent",
      type: "DOUBLE",
      description: "peak_used_bytes as a percentage of reserved_bytes.",
    },
  ];
}

/** The check's SELECT, reading hx.server_stats `js_<storage>` and `js_reserved_<storage>`. */
export function reservationSql(storage: Storage): string {
  const used = `s.js_${storage}`;
  const reserved = `s.js_reserved_${storage}`;
  return `
WITH judged AS (
  SELECT * FROM (
    SELECT s.server_pk, max(s.epoch) AS epoch, max(${used}) AS peak_used,
           CAST(arg_max(${reserved}, s.epoch) AS DOUBLE) AS reserved
    FROM hx.server_stats s
    WHERE s.epoch BETWEEN ep_from AND ep_to AND ${used} IS NOT NULL AND ${reserved} IS NOT NULL
    GROUP BY s.server_pk)
  WHERE reserved > 0 AND reserved < 9223372036854775808.0 AND peak_used * 100.0 < p_min_utilization_percent * reserved
)
SELECT j.epoch, j.server_pk AS entity_pk, i.name AS entity_name, NULL::VARCHAR AS entity_key,
       i.name AS server, 'info' AS severity, CAST(j.reserved AS BIGINT) AS reserved_bytes,
       CAST(j.peak_used AS BIGINT) AS peak_used_bytes,
       CAST(100.0 * j.peak_used / j.reserved AS DOUBLE) AS utilization_percent
FROM judged j
JOIN hx.server_ident i ON i.server_pk = j.server_pk`;
}
