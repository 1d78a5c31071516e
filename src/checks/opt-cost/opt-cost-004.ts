import type { Check } from "../check.ts";
import { latestRowsCte, STREAM_NAME } from "../opt-idle/idle-streams-sql.ts";

/**
 * A file-storage stream holding more than p_max_uncompressed_gib at its latest epoch of the
 * window (its leader's figures) whose configuration in force then says `compression: none`.
 * Servers before 2.10 report no compression (NULL): their streams are not judged.
 */
export const optCost004: Check = {
  code: "opt-cost-004",
  name: "Uncompressed Large Stream",
  description:
    "A file-storage stream holds more than the threshold and stores its messages uncompressed (stream config `compression: none`). Since 2.10 JetStream can compress a file stream's message blocks with S2: text and JSON payloads often shrink several times, and every replica stores the smaller blocks, so a large uncompressed stream may use several times the disk it needs, and read more from it.",
  remediation:
    "Turn on compression for the stream: `nats stream edit <stream> --compression s2` (stream config `compression: s2`, nats-server 2.10+). It applies to blocks written from then on; older blocks are compressed as they are rewritten (compaction) or age out. Payloads that are already compressed or encrypted gain little: check the ratio on a copy first if unsure. Bounding the stream (`--max-bytes`, `--max-age`) also cuts its size.",
  scope: "stream",
  entityType: "stream",
  severity: "info",
  category: "saturation",
  optimization: true,
  lookbackSeconds: 3600,
  minServerVersion: "2.10.0",
  params: [
    {
      name: "p_max_uncompressed_gib",
      default: 1,
      description: "GiB a file-storage stream may hold uncompressed before it is reported.",
    },
  ],
  detailColumns: [
    { name: "bytes", type: "BIGINT", description: "Bytes the stream holds, on each replica." },
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
WHERE d.bytes > p_max_uncompressed_gib * 1073741824 AND o.storage = 'file' AND o.compression = 'none'`,
};
