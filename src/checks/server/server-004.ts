import type { Check } from "../check.ts";
import { lastAnswer } from "./last-answer-sql.ts";

const before = lastAnswer("e", "cur", "slow_consumers IS NOT NULL AND start IS NOT NULL");

/**
 * New slow-consumer events since the previous epoch, or since the last epoch of the past
 * hour the server answered when it missed the previous one (last-answer-sql.ts). The counter restarts at zero with the
 * server; when the start time changed, everything it counts happened since the restart, after
 * the epoch compared with, so all of it is new. With the same start, a counter that went down is
 * not an increase.
 */
export const server004: Check = {
  code: "server-004",
  name: "Slow Consumers",
  description:
    "The server recorded new slow-consumer events since the previous epoch (or, when it did not answer that one, since the last epoch of the past hour it answered): a connection (client, route, gateway or leafnode) did not read its messages fast enough, its pending buffer passed `max_pending` or a write passed `write_deadline`, and the server dropped messages for it or closed it. Core NATS subscribers lose messages; a route or gateway being slow disturbs the whole cluster.",
  remediation:
    "Find the connections: natsmon's conn-002 and accounts-002 findings name them, and so does the server log (`Slow Consumer Detected`), and since 2.10 VARZ `slow_consumer_stats` says whether clients, routes, gateways or leafnodes were slow. Make the subscribers keep up: process messages asynchronously, add queue-group members, use JetStream consumers with flow control for bulk delivery. Raise `max_pending` or `write_deadline` only when the consumer is known to be fast and the network is the limit.",
  scope: "server",
  entityType: "server",
  severity: "critical",
  category: "performance",
  optimization: false,
  params: [],
  detailColumns: [
    {
      name: "new_slow_consumers",
      type: "BIGINT",
      description: "Slow-consumer events since the epoch compared with.",
    },
    { name: "slow_consumers", type: "BIGINT", description: "VARZ slow_consumers now (counter since start)." },
    {
      name: "previous_slow_consumers",
      type: "BIGINT",
      description:
        "The counter in the epoch compared with: the previous one, or the last the server answered.",
    },
    {
      name: "restarted",
      type: "BOOLEAN",
      description:
        "Whether the server restarted since the epoch compared with (then every event counted is new).",
    },
  ],
  sql: `
WITH d AS (
  SELECT e.epoch, cur.server_pk, cur.slow_consumers, p.slow_consumers AS previous_slow_consumers,
         cur.start IS DISTINCT FROM p.start AS restarted
  FROM checks.epochs_in(ep_from, ep_to) e
  JOIN hx.server_stats cur ON cur.epoch = e.epoch
  ${before.join}
  WHERE cur.slow_consumers IS NOT NULL AND cur.start IS NOT NULL AND ${before.within}
)
SELECT d.epoch, d.server_pk AS entity_pk, i.name AS entity_name, NULL::VARCHAR AS entity_key,
       i.name AS server, 'critical' AS severity,
       CAST(CASE WHEN d.restarted THEN d.slow_consumers ELSE d.slow_consumers - d.previous_slow_consumers END AS BIGINT)
         AS new_slow_consumers,
       CAST(d.slow_consumers AS BIGINT) AS slow_consumers,
       CAST(d.previous_slow_consumers AS BIGINT) AS previous_slow_consumers, d.restarted
FROM d JOIN hx.server_ident i ON i.server_pk = d.server_pk
WHERE CASE WHEN d.restarted THEN d.slow_consumers ELSE d.slow_consumers - d.previous_slow_consumers END > 0`,
};
