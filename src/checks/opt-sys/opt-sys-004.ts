import type { Check } from "../check.ts";

export const optSys004: Check = {
  code: "opt-sys-004",
  name: "Unbound Push Consumer",
  description:
    "A push consumer has a deliver subject but nothing is subscribed to it (its leader reports it not `push_bound`). It delivers nothing while unbound: its messages pile up as pending, and a durable one left behind by an application that moved on keeps holding state, and on a work-queue or interest stream keeps the stream from removing messages.",
  remediation:
    "Check which application should subscribe to the deliver subject (`nats consumer info <stream> <consumer>`: Delivery Subject, Deliver Group) and whether it is running and connected to this account. A consumer nobody uses any more should be deleted: `nats consumer rm <stream> <consumer>`. For new code prefer pull consumers, which need no bound subscription.",
  scope: "consumer",
  entityType: "consumer",
  severity: "warning",
  category: "health",
  optimization: true,
  lookbackSeconds: 3600,
  params: [],
  detailColumns: [
    { name: "deliver_subject", type: "VARCHAR", description: "Subject the consumer pushes its messages to." },
    { name: "deliver_group", type: "VARCHAR", description: "Queue group expected on it, if any." },
    {
      name: "unbound_since",
      type: "TIMESTAMP WITH TIME ZONE",
      description: "First epoch of the window since which it has been unbound without a break.",
    },
  ],
  // push_bound is NULL for a pull consumer; the fold reads an absent push_bound of a push
  // consumer as false (omitempty).
  sql: `
WITH latest AS (
  SELECT s.consumer_pk, max(s.epoch) AS epoch,
         arg_max({bound: s.push_bound, leader: s.leader_server_pk}, s.epoch) AS last,
         max(s.epoch) FILTER (WHERE s.push_bound) AS last_bound
  FROM hx.consumer_stats s
  WHERE s.epoch BETWEEN ep_from AND ep_to AND s.push_bound IS NOT NULL
  GROUP BY s.consumer_pk
  HAVING NOT arg_max(s.push_bound, s.epoch)
), unbound AS (
  SELECT l.epoch, l.consumer_pk, l.last.leader AS leader_server_pk, l.last_bound, o.deliver_subject, o.deliver_group
  FROM latest l
  ASOF JOIN hx.consumer_opts o ON o.consumer_pk = l.consumer_pk AND l.epoch >= o.epoch
  WHERE coalesce(o.deliver_subject, '') <> ''
)
SELECT u.epoch, u.consumer_pk AS entity_pk, checks.consumer_label(si.domain, si.account, si.name, ci.name) AS entity_name,
       NULL::VARCHAR AS entity_key, l.name AS server, 'warning' AS severity,
       u.deliver_subject, u.deliver_group,
       (SELECT min(s.epoch) FROM hx.consumer_stats s
        WHERE s.consumer_pk = u.consumer_pk AND s.epoch BETWEEN ep_from AND ep_to
          AND s.epoch > coalesce(u.last_bound, '-infinity'::TIMESTAMPTZ)) AS unbound_since
FROM unbound u
JOIN hx.consumer_ident ci ON ci.consumer_pk = u.consumer_pk
JOIN hx.stream_ident si ON si.stream_pk = ci.stream_pk
LEFT JOIN hx.server_ident l ON l.server_pk = u.leader_server_pk`,
};
