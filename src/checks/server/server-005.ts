import type { Check } from "../check.ts";

/**
 * Memory in use against memory reserved, as JSZ reports both. A server where no account
 * reserves memory (0) or where the reservation is unlimited (2^64−1) has nothing to compare
 * with and is left out.
 */
export const server005: Check = {
  code: "server-005",
  name: "JetStream Memory Pressure",
  description:
    "JetStream memory storage in use on the server (JSZ `memory`) is at or above the threshold share of the memory reserved for JetStream accounts on it (JSZ `reserved_memory`). When it fills up, publishes to memory-backed streams fail with insufficient resources, or streams with `discard: old` lose their oldest messages sooner than expected.",
  remediation:
    "See which streams hold the memory: `nats stream report` (storage column) or `nats server report jetstream`. Lower `max_bytes` / `max_age` on memory streams, move large ones to file storage, or raise the accounts' JetStream memory limits (`jetstream.max_mem` of the account, or `max_memory_store` in the server's `jetstream` block) if the host has the memory.",
  scope: "server",
  entityType: "server",
  severity: "warning",
  category: "saturation",
  optimization: false,
  params: [
    {
      name: "p_warn_percent",
      default: 90,
      description: "Memory in use, in percent of reserved memory, at or above which the check fires.",
    },
  ],
  detailColumns: [
    { name: "used_percent", type: "DOUBLE", description: "Memory in use, percent of reserved memory." },
    { name: "js_memory", type: "BIGINT", description: "JetStream memory storage in use, bytes." },
    {
      name: "js_reserved_memory",
      type: "BIGINT",
      description: "JetStream memory reserved by accounts, bytes.",
    },
    { name: "threshold_percent", type: "DOUBLE", description: "Threshold in force (p_warn_percent)." },
  ],
  sql: `
WITH s AS (
  SELECT st.epoch, st.server_pk, st.js_memory, CAST(st.js_reserved_memory AS DOUBLE) AS reserved
  FROM hx.server_stats st
  WHERE st.epoch BETWEEN ep_from AND ep_to AND st.js_memory IS NOT NULL
    AND st.js_reserved_memory > 0 AND st.js_reserved_memory < 18446744073709551615
)
SELECT s.epoch, s.server_pk AS entity_pk, i.name AS entity_name, NULL::VARCHAR AS entity_key,
       i.name AS server, 'warning' AS severity,
       CAST(100.0 * s.js_memory / s.reserved AS DOUBLE) AS used_percent,
       CAST(s.js_memory AS BIGINT) AS js_memory, CAST(s.reserved AS BIGINT) AS js_reserved_memory,
       CAST(p_warn_percent AS DOUBLE) AS threshold_percent
FROM s JOIN hx.server_ident i ON i.server_pk = s.server_pk
WHERE 100.0 * s.js_memory / s.reserved >= p_warn_percent`,
};
