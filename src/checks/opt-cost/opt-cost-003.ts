import type { Check } from "../check.ts";
import { reservationColumns, reservationSql } from "./reservation-sql.ts";

export const optCost003: Check = {
  code: "opt-cost-003",
  name: "Wasted JetStream Memory Reservation",
  description:
    "The server used less than the threshold of the JetStream memory its streams reserve, all through the range. A memory stream with a byte limit (`max_bytes`) reserves that much of the server's `max_memory_store` on every server holding a replica, used or not; new memory streams are refused (insufficient resources) once the reservations fill the limit, although the memory itself sits empty.",
  remediation:
    "Find the memory streams placed on the server and their limits: the server's JSZ (`nats server request jetstream`: `reserved_memory` against `memory`) and `nats stream info <stream>` (Max Bytes against Bytes). Lower the limits of those that hold far less than they reserve with `nats stream edit <stream> --max-bytes <size>`, or remove streams nobody uses. Then the server's `max_memory_store` can be lowered too, giving the memory back to the machine.",
  scope: "server",
  entityType: "server",
  severity: "info",
  category: "consistency",
  optimization: true,
  lookbackSeconds: 3600,
  params: [
    {
      name: "p_min_utilization_percent",
      default: 20,
      description: "Share of the reserved memory, in percent, the server must have used at its peak.",
    },
  ],
  detailColumns: reservationColumns("memory"),
  sql: reservationSql("memory"),
};
