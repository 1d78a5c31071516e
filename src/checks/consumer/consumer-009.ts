import type { Check } from "../check.ts";
import { durationThresholdSql } from "./consumer-sql.ts";

export const consumer009: Check = {
  code: "consumer-009",
  name: "Last Delivery Critical",
  description:
    "The consumer has not delivered a message for at least the duration its owner set in the consumer's metadata (`io.nats.monitor.last-delivery-critical`, a Go duration such as `5m` or `1h30m`, the key `nats consumer check` reads), measured from its last delivery to the epoch; a consumer that never delivered anything fires too, as in the NATS CLI. Nothing is reaching its clients: no subscriber or puller is active, delivery is blocked by max_ack_pending, or nothing is being published. A duration of 0 or less, an unparsable one, or no key turns the check off.",
  remediation:
    "Check whether the consuming applications are running and connected (`nats consumer info <stream> <consumer>`: last delivery, waiting pulls, ack pending, push bound) and whether the stream still receives messages (`nats stream info <stream>`). Restart or scale the consumers, or clear a full ack-pending window. If quiet periods are normal, lengthen the duration: `nats consumer edit <stream> <consumer> --metadata io.nats.monitor.last-delivery-critical=<duration>`.",
  scope: "consumer",
  entityType: "consumer",
  severity: "critical",
  category: "health",
  optimization: false,
  params: [],
  detailColumns: [
    {
      name: "last_active",
      type: "TIMESTAMP WITH TIME ZONE",
      description: "Time of the consumer's last delivery; NULL when it never delivered.",
    },
    {
      name: "since_ns",
      type: "BIGINT",
      description: "Nanoseconds from the last delivery to the epoch; NULL when it never delivered.",
    },
    {
      name: "threshold",
      type: "VARCHAR",
      description: "The consumer's io.nats.monitor.last-delivery-critical metadata value, as written.",
    },
    { name: "threshold_ns", type: "BIGINT", description: "That duration in nanoseconds." },
  ],
  minServerVersion: "2.10.0",
  sql: durationThresholdSql({ metadataKey: "last-delivery-critical", lastColumn: "last_active" }),
};
