import type { Check } from "../check.ts";
import { largeStreamColumns, largeStreamSql } from "./large-stream-sql.ts";

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
  detailColumns: largeStreamColumns(" in memory"),
  sql: largeStreamSql("p_max_memory_mib * 1048576", "o.storage = 'memory'"),
};
