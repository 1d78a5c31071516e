import type { Check } from "../check.ts";
import {
  memoryPressureColumns,
  memoryPressureParam,
  memoryPressureSql,
} from "../server/memory-pressure-sql.ts";

export const jetstream007: Check = {
  code: "jetstream-007",
  name: "JetStream Memory Utilization Critical",
  description:
    "JetStream memory on the server is at its configured limit (`max_memory_store`, JSZ config `max_memory`): the memory its memory-backed streams hold, or the memory the byte limits (`max_bytes`) of those streams reserve on it, has reached the critical share of the limit (server-005 warns earlier). Once what they hold passes the limit, the server refuses every write to its memory streams (insufficient resources); a memory stream, or a larger `max_bytes`, that does not fit beside the larger of the two is not placed on this server. Measured against the limit, not against the reservation: streams without a byte limit reserve nothing, so memory use compared with the reservation says nothing about pressure.",
  remediation:
    "Compare `memory` and `reserved_memory` with `config.max_memory` in the server's JSZ (`nats server request jetstream`), and find the memory streams it holds with `nats stream report`. If the streams hold the memory, shorten their retention (`nats stream edit <stream> --max-age` / `--max-bytes`) or move large ones to file storage now; if their byte limits reserve it, lower the `max_bytes` of those that hold far less. Or raise `max_memory_store` in the server's `jetstream` block if the host has the memory.",
  scope: "server",
  entityType: "server",
  severity: "critical",
  category: "saturation",
  optimization: false,
  params: [memoryPressureParam("p_crit_percent", 95)],
  detailColumns: memoryPressureColumns("p_crit_percent"),
  sql: memoryPressureSql("p_crit_percent", "critical"),
};
