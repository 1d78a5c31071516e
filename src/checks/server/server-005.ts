import type { Check } from "../check.ts";
import { memoryPressureColumns, memoryPressureParam, memoryPressureSql } from "./memory-pressure-sql.ts";

/** JetStream memory held or reserved against the server's limit: memory-pressure-sql.ts. */
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
  params: [memoryPressureParam("p_warn_percent", 90)],
  detailColumns: memoryPressureColumns("p_warn_percent"),
  sql: memoryPressureSql("p_warn_percent", "warning"),
};
