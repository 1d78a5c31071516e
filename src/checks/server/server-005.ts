import type { Check } from "../check.ts";

/**
 * JetStream memory taken on the server against its configured limit, counted as nats-server
 * counts it when it places a stream: what its memory streams hold (JSZ `memory`) or, when
 * more, what their byte limits reserve (JSZ `reserved_memory`, the sum of the `max_bytes` of
 * the memory stream replicas it holds; streams without one reserve nothing). Neither is
 * compared with the other: a reservation says nothing about how full the streams are.
 * A server without a limit (max_memory 0) is left out, and so is a reservation from 2^63
 * (2^64−1 and other impossible figures), which counts as none.
 */
export const server005: Check = {
  code: "server-005",
  name: "JetStream Memory Pressure",
  description:
    "JetStream memory on the server is close to its configured limit (`max_memory_store`, JSZ config `max_memory`): the memory its memory-backed streams hold, or the memory the byte limits (`max_bytes`) of those streams reserve on it, has reached the threshold share of the limit. Once what they hold passes the limit, the server refuses every write to its memory streams (insufficient resources); a new memory stream, or a larger `max_bytes`, that does not fit beside the larger of the two is not placed on this server, and is refused when no server has the room.",
  remediation:
    "Compare `memory` and `reserved_memory` with `config.max_memory` in the server's JSZ (`nats server request jetstream`), and find the memory streams it holds with `nats stream report` (storage and size per stream). If the streams hold the memory, shorten their retention (`nats stream edit <stream> --max-age` / `--max-bytes`) or move large ones to file storage; if their byte limits reserve it, lower the `max_bytes` of those that hold far less. Or raise `max_memory_store` in the server's `jetstream` block if the host has the memory.",
  scope: "server",
  entityType: "server",
  severity: "warning",
  category: "saturation",
  optimization: false,
  params: [
    {
      name: "p_warn_percent",
      default: 90,
      description:
        "Memory held, or reserved, in percent of the server's JetStream memory limit, at or above which the check fires.",
    },
  ],
  detailColumns: [
    {
      name: "memory_bytes",
      type: "BIGINT",
      description: "JetStream memory the server's memory streams hold, bytes (JSZ memory).",
    },
    {
      name: "reserved_memory_bytes",
      type: "BIGINT",
      description:
        "JetStream memory reserved on the server by its memory streams' max_bytes, bytes (JSZ reserved_memory).",
    },
    {
      name: "max_memory_bytes",
      type: "BIGINT",
      description: "The server's JetStream memory limit, bytes (max_memory_store).",
    },
    {
      name: "used_percent",
      type: "DOUBLE",
      description: "memory_bytes as a percentage of max_memory_bytes.",
    },
    {
      name: "reserved_percent",
      type: "DOUBLE",
      description: "reserved_memory_bytes as a percentage of max_memory_bytes.",
    },
    { name: "warn_percent", type: "DOUBLE", description: "Threshold in force (p_warn_percent)." },
  ],
  sql: `
WITH s AS (
  SELECT epoch, server_pk, server, js_memory, CAST(js_max_memory AS DOUBLE) AS max_memory,
         CASE WHEN js_reserved_memory < 9223372036854775808.0 THEN js_reserved_memory END AS reserved
  FROM hx.servers
  WHERE epoch BETWEEN ep_from AND ep_to AND js_max_memory > 0 AND js_memory IS NOT NULL
)
SELECT epoch, server_pk AS entity_pk, server AS entity_name, NULL::VARCHAR AS entity_key, server,
       'warning' AS severity,
       CAST(js_memory AS BIGINT) AS memory_bytes, CAST(reserved AS BIGINT) AS reserved_memory_bytes,
       CAST(max_memory AS BIGINT) AS max_memory_bytes,
       CAST(round(100.0 * js_memory / max_memory, 2) AS DOUBLE) AS used_percent,
       CAST(round(100.0 * reserved / max_memory, 2) AS DOUBLE) AS reserved_percent,
       CAST(p_warn_percent AS DOUBLE) AS warn_percent
FROM s
WHERE 100.0 * greatest(js_memory, coalesce(reserved, 0)) >= p_warn_percent * max_memory`,
};
