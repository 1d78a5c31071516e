import type { Check } from "../check.ts";

export const optSys002: Check = {
  code: "opt-sys-002",
  name: "High Consumer Redelivery",
  description:
    "The messages a consumer has redelivered and still awaits an acknowledgement for (its redelivery backlog, `num_redelivered`) exceed the threshold share of the deliveries it made over the window. Its subscribers keep failing to acknowledge in time: they are too slow for the consumer's `ack_wait`, they crash or nak, or some messages cannot be processed at all. Each redelivery costs the work done again and delays the messages behind it.",
  remediation:
    "Look at the consumer with `nats consumer info <stream> <consumer>` (Redelivered Messages, Ack Wait, Max Deliver) and at the subscribers' logs. When processing takes longer than `ack_wait`, raise it (`nats consumer edit <stream> <consumer> --wait=2m`) or have the subscriber send progress acks (nats.go `msg.InProgress()`, nats.js `msg.working()`); when some messages always fail, cap attempts with `--max-deliver` and a `backoff`, and handle the `MAX_DELIVERIES` advisory (dead-letter them). Add subscribers when they are simply too few.",
  scope: "consumer",
  entityType: "consumer",
  severity: "warning",
  category: "errors",
  optimization: true,
  lookbackSeconds: 3600,
  params: [
    {
      name: "p_redelivery_percent",
      default: 10,
      description:
        "Redelivery backlog, as a percentage of the deliveries made in the window, above which it fires.",
    },
  ],
  detailColumns: [
    {
      name: "num_redelivered",
      type: "BIGINT",
      description: "Messages redelivered at least once and not yet acknowledged, at that epoch.",
    },
    {
      name: "delivered_in_window",
      type: "BIGINT",
      description: "Deliveries (consumer sequence advance, redeliveries included) over the window.",
    },
    {
      name: "redelivery_percent",
      type: "DOUBLE",
      description: "num_redelivered as a percentage of delivered_in_window.",
    },
  ],
  // The consumer sequence counts every delivery, redeliveries included. A consumer created
  // again (a new `created`) starts a new sequence: all of it was delivered since. The
  // sequence also steps back a little without that (a new consumer leader takes it from
  // its replicated state, which may trail the old leader's): such a step counts as no
  // delivery rather than as the whole sequence.
  sql: `
WITH steps AS (
  SELECT s.epoch, s.consumer_pk, s.leader_server_pk, s.num_redelivered,
         CASE WHEN lag(s.delivered_consumer_seq) OVER w IS NULL THEN 0
              WHEN o.created IS DISTINCT FROM lag(o.created) OVER w THEN s.delivered_consumer_seq
              ELSE greatest(s.delivered_consumer_seq - lag(s.delivered_consumer_seq) OVER w, 0) END AS delivered
  FROM hx.consumer_stats s
  ASOF LEFT JOIN hx.consumer_opts o ON o.consumer_pk = s.consumer_pk AND s.epoch >= o.epoch
  WHERE s.epoch BETWEEN ep_from AND ep_to AND s.delivered_consumer_seq IS NOT NULL
  WINDOW w AS (PARTITION BY s.consumer_pk ORDER BY s.epoch)
), per_consumer AS (
  SELECT consumer_pk, max(epoch) AS epoch, sum(delivered) AS delivered,
         arg_max({redelivered: num_redelivered, leader: leader_server_pk}, epoch) AS last
  FROM steps
  GROUP BY consumer_pk
)
SELECT p.epoch, p.consumer_pk AS entity_pk, checks.consumer_label(si.domain, si.account, si.name, ci.name) AS entity_name,
       NULL::VARCHAR AS entity_key, l.name AS server, 'warning' AS severity,
       CAST(p.last.redelivered AS BIGINT) AS num_redelivered, CAST(p.delivered AS BIGINT) AS delivered_in_window,
       CAST(100.0 * p.last.redelivered / p.delivered AS DOUBLE) AS redelivery_percent
FROM per_consumer p
JOIN hx.consumer_ident ci ON ci.consumer_pk = p.consumer_pk
JOIN hx.stream_ident si ON si.stream_pk = ci.stream_pk
LEFT JOIN hx.server_ident l ON l.server_pk = p.last.leader
WHERE p.delivered > 0 AND p.last.redelivered * 100.0 > p_redelivery_percent * p.delivered`,
};
