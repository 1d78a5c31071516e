import type { Check } from "../check.ts";
import { countThresholdSql } from "./consumer-sql.ts";

export const consumer011: Check = {
  code: "consumer-011",
  name: "Redelivery Critical",
  description:
    "At least as many of the consumer's messages are being redelivered as the limit its owner set in the consumer's metadata (`io.nats.monitor.redelivery-critical`, the key `nats consumer check` reads). Messages are not acknowledged within ack_wait, or are negatively acknowledged: handlers fail, time out or crash, and the same messages keep coming back (until max_deliver, after which they are dropped for this consumer). A value of 0 or less, or no key, turns the check off for the consumer.",
  remediation:
    "Look for failing or slow handlers in the consuming applications and for poison messages (`nats consumer info <stream> <consumer>`; the MAX_DELIVERIES advisories with `nats event --js-advisory`). Make ack_wait longer than the processing time, or send progress acks (`+WPI`) for long work; terminate poison messages with `+TERM`. To change the limit: `nats consumer edit <stream> <consumer> --metadata io.nats.monitor.redelivery-critical=<n>`.",
  scope: "consumer",
  entityType: "consumer",
  severity: "critical",
  category: "errors",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "num_redelivered", type: "BIGINT", description: "Messages redelivered at least once." },
    {
      name: "threshold",
      type: "BIGINT",
      description: "The consumer's io.nats.monitor.redelivery-critical metadata value.",
    },
    {
      name: "max_deliver",
      type: "BIGINT",
      description: "Configured max_deliver: delivery attempts per message (-1 unlimited).",
    },
  ],
  minServerVersion: "2.10.0",
  sql: countThresholdSql({
    metadataKey: "redelivery-critical",
    figure: "num_redelivered",
    extraColumns: ", CAST(c.max_deliver AS BIGINT) AS max_deliver",
  }),
};
