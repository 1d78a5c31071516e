import type { Check } from "../check.ts";

/**
 * The gap is counted in consumer sequences (deliveries, redeliveries included), not stream
 * sequences: a filtered consumer skips the stream's other subjects, which would widen a
 * stream-sequence gap without anything being unacknowledged. Read at the latest epoch in
 * the window holding the consumer.
 */
export const optSys015: Check = {
  code: "opt-sys-015",
  name: "Consumer ACK Floor Divergence",
  description:
    "The consumer's ack floor (below which every delivery is acknowledged) trails its last delivery by many times max_ack_pending, or by a large number of deliveries outright. Clients acknowledge later messages while some early ones stay unacknowledged: the stuck messages are redelivered again and again, the consumer state the servers keep and replicate grows with every acknowledgement above the floor, and on a work-queue or interest stream the messages above the floor cannot be removed. Info at the lower thresholds, warning at the higher ones.",
  remediation:
    "Find the messages holding the floor: `nats consumer info <stream> <consumer>` (Acknowledgment Floor against Last Delivered Message, Outstanding Acks, Redelivered Messages), then `nats consumer next` or the application logs for the messages that are never acknowledged (processing errors, handlers that return without acking). Acknowledge or terminate them (`+TERM`), set `max_deliver` so a poison message stops being redelivered, and handle errors with a NAK or TERM rather than dropping the message.",
  scope: "consumer",
  entityType: "consumer",
  severity: "dynamic",
  category: "errors",
  optimization: true,
  lookbackSeconds: 3600,
  params: [
    {
      name: "p_warn_multiplier",
      default: 2,
      description: "Gap, as a multiple of max_ack_pending, above which the check fires as info.",
    },
    {
      name: "p_crit_multiplier",
      default: 5,
      description: "Gap, as a multiple of max_ack_pending, above which it fires as warning.",
    },
    { name: "p_warn_abs", default: 100_000, description: "Gap in deliveries above which it fires as info." },
    {
      name: "p_crit_abs",
      default: 1_000_000,
      description: "Gap in deliveries above which it fires as warning.",
    },
  ],
  detailColumns: [
    { name: "delivered_seq", type: "BIGINT", description: "Consumer sequence of the last delivery." },
    { name: "ack_floor_seq", type: "BIGINT", description: "Consumer sequence of the ack floor." },
    { name: "gap", type: "BIGINT", description: "delivered_seq minus ack_floor_seq." },
    {
      name: "max_ack_pending",
      type: "BIGINT",
      description: "Unacknowledged messages allowed; -1 unlimited.",
    },
    { name: "num_ack_pending", type: "BIGINT", description: "Deliveries awaiting acknowledgement." },
  ],
  sql: `
WITH latest AS (
  SELECT s.consumer_pk, max(s.epoch) AS epoch
  FROM hx.consumer_stats s WHERE s.epoch BETWEEN ep_from AND ep_to GROUP BY s.consumer_pk
),
gaps AS (
  SELECT s.epoch, s.consumer_pk, s.leader_server_pk, s.delivered_consumer_seq, s.ack_floor_consumer_seq,
         s.delivered_consumer_seq - s.ack_floor_consumer_seq AS gap, s.num_ack_pending, o.max_ack_pending
  FROM latest l
  JOIN hx.consumer_stats s ON s.consumer_pk = l.consumer_pk AND s.epoch = l.epoch
  ASOF JOIN hx.consumer_opts o ON o.consumer_pk = s.consumer_pk AND s.epoch >= o.epoch
  WHERE s.epoch BETWEEN ep_from AND ep_to AND o.ack_policy <> 'none'
),
judged AS (
  SELECT *,
         CASE WHEN gap > p_crit_abs OR (max_ack_pending > 0 AND gap > p_crit_multiplier * max_ack_pending) THEN 'warning'
              WHEN gap > p_warn_abs OR (max_ack_pending > 0 AND gap > p_warn_multiplier * max_ack_pending) THEN 'info'
         END AS severity
  FROM gaps
)
SELECT j.epoch, j.consumer_pk AS entity_pk, checks.consumer_label(si.domain, si.account, si.name, ci.name) AS entity_name,
       NULL::VARCHAR AS entity_key, sv.name AS server, j.severity,
       j.delivered_consumer_seq AS delivered_seq, j.ack_floor_consumer_seq AS ack_floor_seq, j.gap,
       j.max_ack_pending, j.num_ack_pending
FROM judged j
JOIN hx.consumer_ident ci ON ci.consumer_pk = j.consumer_pk
JOIN hx.stream_ident si ON si.stream_pk = ci.stream_pk
LEFT JOIN hx.server_ident sv ON sv.server_pk = j.leader_server_pk
WHERE j.severity IS NOT NULL`,
};
