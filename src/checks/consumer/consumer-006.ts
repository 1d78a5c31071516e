import type { Check } from "../check.ts";
import { countThresholdSql } from "./consumer-sql.ts";

export const consumer006: Check = {
  code: "consumer-006",
  name: "Outstanding Ack Critical",
  description:
    "The consumer has at least as many delivered-but-unacknowledged messages as the limit its owner set in the consumer's metadata (`io.nats.monitor.outstanding-ack-critical`, the key `nats consumer check` reads). Clients are receiving messages but not acknowledging them in time: they are stuck, too slow, or crash before acking; once max_ack_pending is reached, delivery stops altogether. A value of 0 or less, or no key, turns the check off for the consumer.",
  remediation:
    "Look at the consuming applications: errors, processing time, whether they ack at all (`nats consumer info <stream> <consumer>` shows ack pending and redeliveries). Add workers or fix the handler; make sure ack_wait fits the processing time. To change the limit, edit the metadata: `nats consumer edit <stream> <consumer> --metadata io.nats.monitor.outstanding-ack-critical=<n>`.",
  scope: "consumer",
  entityType: "consumer",
  severity: "critical",
  category: "health",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "num_ack_pending", type: "BIGINT", description: "Delivered messages awaiting acknowledgement." },
    {
      name: "threshold",
      type: "BIGINT",
      description: "The consumer's io.nats.monitor.outstanding-ack-critical metadata value.",
    },
    {
      name: "max_ack_pending",
      type: "BIGINT",
      description: "Configured max_ack_pending: where delivery stops (-1 unlimited).",
    },
  ],
  minServerVersion: "2.10.0",
  sql: countThresholdSql({
    metadataKey: "outstanding-ack-critical",
    figure: "num_ack_pending",
    extraColumns: ", CAST(c.max_ack_pending AS BIGINT) AS max_ack_pending",
  }),
};
