import type { Check } from "../check.ts";
import { latestRowsCte, STREAM_NAME } from "../opt-idle/idle-streams-sql.ts";

/**
 * A memory-storage stream holding more than p_max_memory_mib at its latest epoch of the
 * window (its leader's figures, and its configuration in force then). Narrowed on
 * hx.stream_stats alone (its bytes) before anything names it.
 */
export const optCost002: Check = {
  code: "opt-cost-002",
  name: "Memory Storage Large Stream",
  description:
    "A stream kept in memory holds more than the threshold. Memory storage is the most expensive place for messages: every replica holds them in the server's RAM, they count against the server's `max_memory_store` (which JetStream takes from the machine's memory) and they are lost when all replicas restart at once. A large memory stream crowds out other memory streams and raises the risk of the server running out of memory.",
  remediation:
    "Check whether the stream needs memory speed. If not, move it to file storage: create a file-backed copy (`nats stream add <new> --storage file`, sourcing the old one with `--source`), switch publishers and consumers to it, then remove the old one (a stream's storage type cannot be edited). If it must stay in memory, bound it: `nats stream edit <stream> --max-bytes <size>` or `--max-age`, and keep its replicas low.",
  scope: "stream",
  entityType: "stream",
  severity: "info",
  category: "saturation",
  optimization: true,
  lookbackSeconds: 3600,
  params: [
    {
      name: "p_max_memory_mib",
      default: 100,
      description: "MiB a memory-storage stream may hold before it is reported.",
    },
  ],
  detailColumns: [
    { name: "bytes", type: "BIGINT", description: "Bytes the stream holds in memory, on each replica." },
    { name: "replicas", type: "INTEGER", description: "Replicas, each holding those bytes." },
    { name: "max_bytes", type: "BIGINT", description: "The stream's byte limit; -1 when unlimited." },
  ],
  sql: `
WITH ${latestRowsCte("latest", "hx.stream_stats", "stream_pk")}
SELECT d.epoch, d.stream_pk AS entity_pk, ${STREAM_NAME} AS entity_name, NULL::VARCHAR AS entity_key,
       l.name AS server, 'info' AS severity, CAST(d.bytes AS BIGINT) AS bytes,
       CAST(o.replicas AS INTEGER) AS replicas, CAST(o.max_bytes AS BIGINT) AS max_bytes
FROM latest d
JOIN hx.stream_ident si ON si.stream_pk = d.stream_pk
LEFT JOIN hx.server_ident l ON l.server_pk = d.leader_server_pk
ASOF JOIN hx.stream_opts o ON o.stream_pk = d.stream_pk AND d.epoch >= o.epoch
WHERE d.bytes > p_max_memory_mib * 1048576 AND o.storage = 'memory'`,
};
