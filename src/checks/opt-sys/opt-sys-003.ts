import type { Check } from "../check.ts";

export const optSys003: Check = {
  code: "opt-sys-003",
  name: "Ack Pending Buildup",
  description:
    "A consumer's delivered but unacknowledged messages (`num_ack_pending`) have reached the threshold share of its `max_ack_pending`. At 100% the server stops delivering to it until acknowledgements arrive: every subscriber stalls, however idle, while the stream's backlog grows.",
  remediation:
    "Find out why acknowledgements lag: `nats consumer info <stream> <consumer>` (Outstanding Acks, Ack Wait) and the subscribers' processing times. Acknowledge each message as soon as it is processed, add subscribers (a pull consumer scales by adding fetchers), and raise the limit when the subscribers can take more in flight: `nats consumer edit <stream> <consumer> --max-pending=N` (`max_ack_pending`).",
  scope: "consumer",
  entityType: "consumer",
  severity: "warning",
  category: "errors",
  optimization: true,
  lookbackSeconds: 3600,
  params: [
    {
      name: "p_warn_percent",
      default: 80,
      description: "Ack-pending count, as a percentage of max_ack_pending, at or above which it fires.",
    },
  ],
  detailColumns: [
    { name: "num_ack_pending", type: "BIGINT", description: "Delivered messages awaiting acknowledgement." },
    { name: "max_ack_pending", type: "BIGINT", description: "The consumer's max_ack_pending." },
    {
      name: "ack_pending_percent",
      type: "DOUBLE",
      description: "num_ack_pending as a percentage of max_ack_pending.",
    },
  ],
  // A consumer with max_ack_pending -1 (or ack policy none, reported as 0) has no such stall.
  sql: `
WITH latest AS (
  SELECT s.consumer_pk, max(s.epoch) AS epoch,
         arg_max({pending: s.num_ack_pending, leader: s.leader_server_pk}, s.epoch) AS last
  FROM hx.consumer_stats s
  WHERE s.epoch BETWEEN ep_from AND ep_to
  GROUP BY s.consumer_pk
), building AS (
  SELECT l.epoch, l.consumer_pk, l.last.pending AS num_ack_pending, l.last.leader AS leader_server_pk,
         o.max_ack_pending
  FROM latest l
  ASOF JOIN hx.consumer_opts o ON o.consumer_pk = l.consumer_pk AND l.epoch >= o.epoch
  WHERE o.max_ack_pending > 0 AND l.last.pending * 100.0 >= p_warn_percent * o.max_ack_pending
)
SELECT b.epoch, b.consumer_pk AS entity_pk, checks.consumer_label(si.domain, si.account, si.name, ci.name) AS entity_name,
       NULL::VARCHAR AS entity_key, l.name AS server, 'warning' AS severity,
       CAST(b.num_ack_pending AS BIGINT) AS num_ack_pending, CAST(b.max_ack_pending AS BIGINT) AS max_ack_pending,
       CAST(100.0 * b.num_ack_pending / b.max_ack_pending AS DOUBLE) AS ack_pending_percent
FROM building b
JOIN hx.consumer_ident ci ON ci.consumer_pk = b.consumer_pk
JOIN hx.stream_ident si ON si.stream_pk = ci.stream_pk
LEFT JOIN hx.server_ident l ON l.server_pk = b.leader_server_pk`,
};
