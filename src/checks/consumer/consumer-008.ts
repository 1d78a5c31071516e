import type { Check } from "../check.ts";
import { countThresholdSql } from "./consumer-sql.ts";

export const consumer008: Check = {
  code: "consumer-008",
  name: "Unprocessed Critical",
  description:
    "The consumer has at least as many messages not yet delivered (num_pending) as the limit its owner set in the consumer's metadata (`io.nats.monitor.unprocessed-critical`, the key `nats consumer check` reads). Its backlog is growing beyond what the owner considers healthy: consumers are not keeping up with publishers, or are not running. A value of 0 or less, or no key, turns the check off for the consumer.",
  remediation:
    "Check that the consuming applications are running and pulling (`nats consumer info <stream> <consumer>`: unprocessed, last delivery, waiting pulls). Scale out the consumers, speed up processing, or raise max_ack_pending if delivery is throttled by unacknowledged messages. To change the limit: `nats consumer edit <stream> <consumer> --metadata io.nats.monitor.unprocessed-critical=<n>`.",
  scope: "consumer",
  entityType: "consumer",
  severity: "critical",
  category: "health",
  optimization: false,
  params: [],
  detailColumns: [
    {
      name: "num_pending",
      type: "BIGINT",
      description: "Messages in the stream not yet delivered to the consumer.",
    },
    {
      name: "threshold",
      type: "BIGINT",
      description: "The consumer's io.nats.monitor.unprocessed-critical metadata value.",
    },
    { name: "num_ack_pending", type: "BIGINT", description: "Delivered messages awaiting acknowledgement." },
  ],
  minServerVersion: "2.10.0",
  sql: countThresholdSql({
    metadataKey: "unprocessed-critical",
    figure: "num_pending",
    extraColumns: ", CAST(c.num_ack_pending AS BIGINT) AS num_ack_pending",
  }),
};
