import type { Check } from "../check.ts";

export const optSys011: Check = {
  code: "opt-sys-011",
  name: "Subscription Fanout Anomaly",
  description:
    "A server's largest subscription fanout (the most subscriptions one cached subject matches, SUBSZ `max_fanout`) is more than the threshold times its average fanout. A few subjects reach far more subscribers than the rest: every message on them is copied to each, which multiplies outbound traffic and CPU on that server and makes it the first to see slow consumers. It is often one subject many instances subscribe to without a queue group, or a wildcard subscription matching everything.",
  remediation:
    "Find the subject with the widest interest: `nats server request subscriptions --detail` (SUBSZ with the subscriptions listed), or `nats server report connections --sort subs`. When the subscribers are instances of one service that should share the work, put them in a queue group; narrow broad wildcard subscriptions (`>`); and for fan-out that is meant, make sure the subscribers' connections are spread over the cluster's servers.",
  scope: "server",
  entityType: "server",
  severity: "info",
  category: "performance",
  optimization: true,
  lookbackSeconds: 3600,
  params: [
    {
      name: "p_multiplier",
      default: 10,
      description: "How many times the average fanout the maximum fanout must exceed.",
    },
  ],
  detailColumns: [
    {
      name: "max_fanout",
      type: "BIGINT",
      description: "Largest fanout of a cached subject (SUBSZ max_fanout).",
    },
    {
      name: "avg_fanout",
      type: "DOUBLE",
      description: "Average fanout over the cached subjects (SUBSZ avg_fanout).",
    },
    { name: "num_subscriptions", type: "BIGINT", description: "Subscriptions on the server." },
  ],
  // An average of 1 or less means nearly every subject has one subscriber, and the ratio
  // says little; SUBSZ computes both figures over the sublist cache only.
  sql: `
WITH latest AS (
  SELECT s.server_pk, max(s.epoch) AS epoch,
         arg_max({max_fanout: s.max_fanout, avg_fanout: s.avg_fanout, subs: s.num_subscriptions}, s.epoch) AS last
  FROM hx.subscription_stats s
  WHERE s.epoch BETWEEN ep_from AND ep_to
  GROUP BY s.server_pk
)
SELECT l.epoch, l.server_pk AS entity_pk, sv.name AS entity_name, NULL::VARCHAR AS entity_key, sv.name AS server,
       'info' AS severity, CAST(l.last.max_fanout AS BIGINT) AS max_fanout,
       CAST(l.last.avg_fanout AS DOUBLE) AS avg_fanout, CAST(l.last.subs AS BIGINT) AS num_subscriptions
FROM latest l
JOIN hx.server_ident sv ON sv.server_pk = l.server_pk
WHERE l.last.avg_fanout > 1 AND l.last.max_fanout > p_multiplier * l.last.avg_fanout`,
};
