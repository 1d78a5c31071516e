import type { Check } from "../check.ts";

export const jetstream007: Check = {
  code: "jetstream-007",
  name: "JetStream Memory Utilization Critical",
  description:
    "The memory-backed streams on the server use 95% or more of the memory reserved for them. The reservation is the sum of the max_bytes of the memory streams placed on the server; streams that reach their share discard messages or refuse publishes, and memory use beyond the reservation competes with the server's own memory.",
  remediation:
    "Find the memory streams on the server (`nats stream report` shows storage and size per stream) and check which are near their max_bytes. Raise max_bytes where the server has room (`nats stream edit <stream> --max-bytes=N`, within the server's `jetstream.max_memory_store`), shorten retention with `--max-age`, or move large streams to file storage.",
  scope: "server",
  entityType: "server",
  severity: "critical",
  category: "saturation",
  optimization: false,
  params: [
    {
      name: "p_crit_percent",
      default: 95,
      description: "JetStream memory use as a percentage of the reserved memory at or above which it fires.",
    },
  ],
  detailColumns: [
    { name: "js_memory", type: "BIGINT", description: "JetStream memory storage used, bytes." },
    {
      name: "js_reserved_memory",
      type: "BIGINT",
      description: "JetStream memory reserved on the server (max_bytes of its memory streams), bytes.",
    },
    { name: "used_percent", type: "DOUBLE", description: "js_memory as a percentage of js_reserved_memory." },
    { name: "threshold_percent", type: "DOUBLE", description: "p_crit_percent in force." },
    {
      name: "js_max_memory",
      type: "BIGINT",
      description: "The server's JetStream memory limit (jetstream.max_memory_store), bytes.",
    },
  ],
  // Nothing reserved (0) or an unlimited reservation (2^64-1) gives no base to measure against.
  sql: `
SELECT s.epoch, s.server_pk AS entity_pk, s.server AS entity_name, NULL::VARCHAR AS entity_key, s.server,
       'critical' AS severity, s.js_memory, CAST(s.js_reserved_memory AS BIGINT) AS js_reserved_memory,
       CAST(100.0 * s.js_memory / s.js_reserved_memory AS DOUBLE) AS used_percent,
       CAST(p_crit_percent AS DOUBLE) AS threshold_percent, s.js_max_memory
FROM hx.servers s
WHERE s.epoch BETWEEN ep_from AND ep_to
  AND s.js_reserved_memory > 0 AND s.js_reserved_memory < 18446744073709551615::UBIGINT
  AND s.js_memory * 100.0 >= p_crit_percent * s.js_reserved_memory`,
};
