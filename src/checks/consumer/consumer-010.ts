import type { Check } from "../check.ts";
import { durationThresholdSql } from "./consumer-sql.ts";

export const consumer010: Check = {
  code: "consumer-010",
  name: "Last Ack Critical",
  description:
    "The consumer's acknowledgement floor has not moved for at least the duration its owner set in the consumer's metadata (`io.nats.monitor.last-ack-critical`, a Go duration such as `10m`, the key `nats consumer check` reads), measured from the last acknowledgement to the epoch; a consumer that never had a message acknowledged fires too, as in the NATS CLI. Messages may still be delivered, but none is being completed: handlers hang, fail before acking, or a single unacknowledged message holds the floor. A duration of 0 or less, an unparsable one, or no key turns the check off.",
  remediation:
    "Look at the consuming applications' processing and ack path (`nats consumer info <stream> <consumer>`: ack floor, ack pending, redelivered). Fix handlers that never ack, terminate poison messages (`+TERM`), and make sure ack_wait fits the processing time. If long gaps are normal, lengthen the duration: `nats consumer edit <stream> <consumer> --metadata io.nats.monitor.last-ack-critical=<duration>`.",
  scope: "consumer",
  entityType: "consumer",
  severity: "critical",
  category: "health",
  optimization: false,
  params: [],
  detailColumns: [
    {
      name: "ack_floor_last_active",
      type: "TIMESTAMP WITH TIME ZONE",
      description: "Time of the consumer's last acknowledgement; NULL when there never was one.",
    },
    {
      name: "since_ns",
      type: "BIGINT",
      description: "Nanoseconds from the last acknowledgement to the epoch; NULL when there never was one.",
    },
    {
      name: "threshold",
      type: "VARCHAR",
      description: "The consumer's io.nats.monitor.last-ack-critical metadata value, as written.",
    },
    { name: "threshold_ns", type: "BIGINT", description: "That duration in nanoseconds." },
  ],
  minServerVersion: "2.10.0",
  sql: durationThresholdSql({ metadataKey: "last-ack-critical", lastColumn: "ack_floor_last_active" }),
};
