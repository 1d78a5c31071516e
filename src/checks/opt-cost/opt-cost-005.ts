import type { Check } from "../check.ts";
import { reservationColumns, reservationSql } from "./reservation-sql.ts";

export const optCost005: Check = {
  code: "opt-cost-005",
  name: "Wasted JetStream Storage Reservation",
  description:
    "The server used less than the threshold of the JetStream file storage its streams reserve, all through the range. A file stream with a byte limit (`max_bytes`) reserves that much of the server's `max_file_store` on every server holding a replica, used or not; new file streams are refused (insufficient resources) once the reservations fill the limit, although the disk sits empty.",
  remediation:
    "Find the file streams placed on the server and their limits: the server's JSZ (`nats server request jetstream`: `reserved_storage` against `storage`) and `nats stream info <stream>` (Max Bytes against Bytes). Lower the limits of those that hold far less than they reserve with `nats stream edit <stream> --max-bytes <size>`, or remove streams nobody uses. Then the server's `max_file_store` (and the disk behind it) can be made smaller.",
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
      description: "Share of the reserved storage, in percent, the server must have used at its peak.",
    },
  ],
  detailColumns: reservationColumns("file storage"),
  sql: reservationSql("storage"),
};
