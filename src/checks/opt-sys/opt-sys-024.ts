import type { Check } from "../check.ts";

/**
 * Consumer and stream configuration in force at the latest epoch in the window holding the
 * consumer. With a backoff the server sets ack_wait to its first step and waits each step in
 * turn for the redeliveries, so the wait judged is the longest step.
 */
export const optSys024: Check = {
  code: "opt-sys-024",
  name: "WorkQueue Discard New with Aggressive Consumer Settings",
  description:
    "A consumer of a work-queue stream that refuses new messages when full (discard new) waits less than 30 s for an acknowledgement (with a backoff: at its longest step) or gives up after fewer than 10 deliveries. Messages a slow worker has not acknowledged in time are redelivered and soon exhaust max_deliver; they are then no longer delivered, and until someone removes them they hold space in the work queue. Once the stream is full of them, discard new refuses every publish: the producers lose messages.",
  remediation:
    "Give workers the time they need: raise the ack wait (`nats consumer edit <stream> <consumer> --wait=60s`, or have workers send progress acks with `+WPI`) and max_deliver (`--max-deliver=-1` for unlimited, or a higher limit with a backoff). Watch for messages that hit max_deliver (the `$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES` advisory) and remove or re-publish them; consider `discard old` or larger stream limits if losing the oldest work is better than refusing new work.",
  scope: "stream/consumer",
  entityType: "consumer",
  severity: "warning",
  category: "errors",
  optimization: true,
  lookbackSeconds: 3600,
  params: [
    {
      name: "p_min_ack_wait_secs",
      default: 30,
      description: "Ack wait, in seconds, below which the consumer counts as aggressive.",
    },
    {
      name: "p_min_max_deliver",
      default: 10,
      description: "Delivery attempts below which a limited max_deliver counts as aggressive.",
    },
  ],
  detailColumns: [
    {
      name: "ack_wait_secs",
      type: "DOUBLE",
      description: "Ack wait of the consumer, seconds; with a backoff, its longest step.",
    },
    { name: "max_deliver", type: "BIGINT", description: "Delivery attempts per message; -1 unlimited." },
  ],
  sql: `
WITH latest AS (
  SELECT s.consumer_pk, max(s.epoch) AS epoch
  FROM hx.consumer_stats s WHERE s.epoch BETWEEN ep_from AND ep_to GROUP BY s.consumer_pk
),
waits AS (
  SELECT s.epoch, s.consumer_pk, s.leader_server_pk, o.ack_policy, o.max_deliver,
         CASE WHEN len(o.backoff_ns) > 0 THEN list_max(o.backoff_ns) ELSE o.ack_wait_ns END AS ack_wait_ns
  FROM latest l
  JOIN hx.consumer_stats s ON s.consumer_pk = l.consumer_pk AND s.epoch = l.epoch
  ASOF JOIN hx.consumer_opts o ON o.consumer_pk = s.consumer_pk AND s.epoch >= o.epoch
  WHERE s.epoch BETWEEN ep_from AND ep_to
),
aggressive AS (
  SELECT * FROM waits
  WHERE ack_policy <> 'none'
    AND (ack_wait_ns < p_min_ack_wait_secs * 1e9 OR (max_deliver > 0 AND max_deliver < p_min_max_deliver))
)
SELECT a.epoch, a.consumer_pk AS entity_pk, checks.consumer_label(si.domain, si.account, si.name, ci.name) AS entity_name,
       NULL::VARCHAR AS entity_key, sv.name AS server, 'warning' AS severity,
       CAST(a.ack_wait_ns / 1e9 AS DOUBLE) AS ack_wait_secs, a.max_deliver
FROM aggressive a
JOIN hx.consumer_ident ci ON ci.consumer_pk = a.consumer_pk
JOIN hx.stream_ident si ON si.stream_pk = ci.stream_pk
ASOF JOIN hx.stream_opts so ON so.stream_pk = ci.stream_pk AND a.epoch >= so.epoch
LEFT JOIN hx.server_ident sv ON sv.server_pk = a.leader_server_pk
WHERE so.retention = 'workqueue' AND so.discard = 'new'`,
};
