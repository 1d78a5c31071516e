/**
 * JetStream memory taken on a server against its configured limit, counted as nats-server
 * counts it when it places a stream: what its memory streams hold (JSZ `memory`) or, when
 * more, what their byte limits reserve (JSZ `reserved_memory`, the sum of the `max_bytes` of
 * the memory stream replicas it holds; streams without one reserve nothing). Neither is
 * compared with the other: a reservation says nothing about how full the streams are.
 * A server without a limit (max_memory 0) is left out, and so is a reservation from 2^63
 * (2^64−1 and other impossible figures), which counts as none. server-005 (warning) and
 * jetstream-007 (critical) judge it at their own thresholds.
 */
import type { Check, CheckParam } from "../check.ts";

type Severity = "warning" | "critical";

/** The detail columns; the threshold column is named after `param` (`p_warn_percent` → `warn_percent`). */
export function memoryPressureColumns(param: string): Check["detailColumns"] {
  const threshold = param.replace(/^p_/, "");
  return [
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
    { name: threshold, type: "DOUBLE", description: `Threshold in force (${param}).` },
  ];
}

export function memoryPressureParam(param: string, percent: number): CheckParam {
  return {
    name: param,
    default: percent,
    description:
      "Memory held, or reserved, in percent of the server's JetStream memory limit, at or above which the check fires.",
  };
}

export function memoryPressureSql(param: string, severity: Severity): string {
  const threshold = param.replace(/^p_/, "");
  return `
WITH s AS (
  SELECT epoch, server_pk, server, js_memory, CAST(js_max_memory AS DOUBLE) AS max_memory,
         CASE WHEN js_reserved_memory < 9223372036854775808.0 THEN js_reserved_memory END AS reserved
  FROM hx.servers
  WHERE epoch BETWEEN ep_from AND ep_to AND js_max_memory > 0 AND js_memory IS NOT NULL
)
SELECT epoch, server_pk AS entity_pk, server AS entity_name, NULL::VARCHAR AS entity_key, server,
       '${severity}' AS severity,
       CAST(js_memory AS BIGINT) AS memory_bytes, CAST(reserved AS BIGINT) AS reserved_memory_bytes,
       CAST(max_memory AS BIGINT) AS max_memory_bytes,
       CAST(round(100.0 * js_memory / max_memory, 2) AS DOUBLE) AS used_percent,
       CAST(round(100.0 * reserved / max_memory, 2) AS DOUBLE) AS reserved_percent,
       CAST(${param} AS DOUBLE) AS ${threshold}
FROM s
WHERE 100.0 * greatest(js_memory, coalesce(reserved, 0)) >= ${param} * max_memory`;
}
