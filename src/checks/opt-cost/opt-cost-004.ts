import type { Check } from "../check.ts";
import { largeStreamColumns, largeStreamSql } from "./large-stream-sql.ts";

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
  detailColumns: largeStreamColumns(""),
  sql: largeStreamSql("p_max_uncompressed_gib * 1073741824", "o.storage = 'file' AND o.compression = 'none'"),
};
