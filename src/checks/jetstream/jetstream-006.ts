import type { Check } from "../check.ts";
import { lastAnswer } from "../server/last-answer-sql.ts";

const before = lastAnswer("e", "c", "js_consumers IS NOT NULL");

export const jetstream006: Check = {
  code: "jetstream-006",
  name: "Consumer Count Change",
  description:
    "The number of consumers on the server (its consumer replicas, leaders and followers) moved by more than 5000 since the previous epoch (or, when it did not answer that one, since the last epoch of the past hour it answered). Consumer churn on this scale loads the meta group and the server with raft groups being created and removed, and usually means applications create consumers per request or leave ephemeral consumers to expire in bulk.",
  remediation:
    "Look for applications that create a consumer per message, request or connection (`nats consumer ls <stream>` shows many short-lived, often ephemeral consumers). Reuse durable consumers, or use ordered consumers and direct gets for one-off reads. If a server lost or regained many consumers at once, check whether it restarted or whether assets were moved to or from it.",
  scope: "system/server (consumer replica count)",
  entityType: "server",
  severity: "warning",
  category: "errors",
  optimization: false,
  params: [
    {
      name: "p_max_delta",
      default: 5000,
      description:
        "Change in the server's consumer count between two epochs above which it fires, either way.",
    },
  ],
  detailColumns: [
    {
      name: "consumers",
      type: "BIGINT",
      description: "Consumers on the server this epoch, follower replicas included (JSZ consumers).",
    },
    {
      name: "prev_consumers",
      type: "BIGINT",
      description:
        "The same count in the epoch compared with: the previous one, or the last the server answered.",
    },
    {
      name: "delta",
      type: "BIGINT",
      description: "consumers minus prev_consumers (negative when they went away).",
    },
    { name: "threshold_delta", type: "BIGINT", description: "p_max_delta in force." },
  ],
  // Per server rather than per system: each server reports the consumer replicas it holds, so
  // a sum over servers would move when a server merely misses an epoch. A server that missed
  // the previous epoch is compared with the last it answered; without one there is nothing
  // to compare.
  sql: `
WITH d AS (
  SELECT e.epoch, c.server_pk, c.js_consumers AS consumers, p.js_consumers AS prev_consumers
  FROM checks.epochs_in(ep_from, ep_to) e
  JOIN hx.server_stats c ON c.epoch = e.epoch
  ${before.join}
  WHERE abs(c.js_consumers - p.js_consumers) > p_max_delta AND ${before.within}
)
SELECT d.epoch, d.server_pk AS entity_pk, i.name AS entity_name, NULL::VARCHAR AS entity_key, i.name AS server,
       'warning' AS severity, d.consumers, d.prev_consumers, d.consumers - d.prev_consumers AS delta,
       CAST(p_max_delta AS BIGINT) AS threshold_delta
FROM d JOIN hx.server_ident i ON i.server_pk = d.server_pk`,
};
