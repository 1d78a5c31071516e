import type { Check } from "../check.ts";

/**
 * New slow-consumer events of an account since the previous epoch, summed over servers.
 * Account STATZ counts per server, since the account was registered on it: each server's
 * figure is compared with that server's own row of its last epoch at or before the previous
 * one (a server that missed an epoch is compared with the epoch it last answered). When the server
 * restarted in between, or the counter went down (an operator-mode account evicted and
 * loaded again starts from zero), everything it counts now happened since, so all of it is
 * new. A server with no earlier row, or without a known start time, is not compared.
 */
export const accounts002: Check = {
  code: "accounts-002",
  name: "Slow Consumers",
  description:
    "Connections of the account became slow consumers since the previous epoch, counted over all servers: a subscriber of the account did not read its messages fast enough, its pending buffer passed `max_pending` or a write passed `write_deadline`, and the server dropped messages for it or closed the connection. Core NATS subscribers of the account lose messages, and a publisher sharing the connection is held up. The global account `$G` and the system account are different: nats-server also counts under them connections that are no user's, routes, gateways and leafnode links it was slow writing to, so there the events may be a link between servers falling behind rather than any subscriber of the account (`server_links` in the detail).",
  remediation:
    "Find the connections: `nats server report connections --account <account>`, and the servers' logs (`Slow Consumer Detected`) on the servers listed in the detail. Make the account's subscribers keep up: handle messages asynchronously, add queue-group members, move bulk delivery to JetStream consumers with flow control and `max_ack_pending`. Raise `max_pending` or `write_deadline` in the server configuration only when the client is known to be fast and the network is the limit. For `$G` or the system account, look first at the links between the servers listed: their logs' `Slow Consumer Detected` lines name the route, gateway or leafnode connection (server-004 reports the same events per server); check the network between them, the links' pending bytes (ROUTEZ, GATEWAYZ, LEAFZ), their `write_deadline`, and natsmon's cluster and leaf findings.",
  scope: "account",
  entityType: "account",
  severity: "critical",
  category: "performance",
  optimization: false,
  params: [],
  detailColumns: [
    {
      name: "new_slow_consumers",
      type: "BIGINT",
      description: "Slow-consumer events of the account since the previous epoch, all servers.",
    },
    {
      name: "slow_consumers",
      type: "BIGINT",
      description: "Account STATZ slow_consumers now, summed over the servers compared (counters).",
    },
    {
      name: "servers",
      type: "VARCHAR[]",
      description: "Servers where the account had new slow consumers, sorted.",
    },
    {
      name: "server_links",
      type: "BOOLEAN",
      description:
        "Whether the account is `$G` or the system account, under which nats-server also counts slow routes, gateways and leafnode links: the events may then be links between servers, not the account's subscribers.",
    },
  ],
  // The server's last epoch is found in hx.server_stats (one row per server and epoch), and
  // the account's row of that epoch joined by equality: an ASOF over all of
  // hx.account_stats (accounts × servers × epochs) would grow with the history kept.
  sql: `
WITH cur AS (
  SELECT e.epoch, e.prev_epoch, s.server_pk, s.start
  FROM checks.epochs_in(ep_from, ep_to) e
  JOIN hx.server_stats s ON s.epoch = e.epoch
  WHERE e.prev_epoch IS NOT NULL AND s.start IS NOT NULL
), servers_before AS (
  SELECT c.epoch, c.server_pk, c.start, p.epoch AS before, p.start AS before_start
  FROM cur c
  ASOF JOIN (SELECT * FROM hx.server_stats WHERE epoch >= ep_from - INTERVAL 1 HOUR AND epoch < ep_to) p
    ON p.server_pk = c.server_pk AND c.prev_epoch >= p.epoch
  WHERE p.start IS NOT NULL
), compared AS (
  SELECT b.epoch, a.account_pk, a.server_pk, a.slow_consumers,
         CASE WHEN b.start IS DISTINCT FROM b.before_start OR a.slow_consumers < pa.slow_consumers
              THEN a.slow_consumers ELSE a.slow_consumers - pa.slow_consumers END AS new_events
  FROM servers_before b
  JOIN hx.account_stats a ON a.epoch = b.epoch AND a.server_pk = b.server_pk
  JOIN hx.account_stats pa ON pa.epoch = b.before AND pa.server_pk = b.server_pk AND pa.account_pk = a.account_pk
  ANTI JOIN checks.accounts_gone(ep_from, ep_to) g ON g.epoch = a.epoch AND g.account_pk = a.account_pk
  -- The bounds of servers_before, written out: the joins alone read every epoch's rows.
  WHERE a.epoch BETWEEN ep_from AND ep_to AND pa.epoch >= ep_from - INTERVAL 1 HOUR AND pa.epoch < ep_to
    AND a.slow_consumers IS NOT NULL AND pa.slow_consumers IS NOT NULL
), summed AS (
  SELECT c.epoch, c.account_pk, sum(c.new_events) AS new_events, sum(c.slow_consumers) AS slow_consumers,
         list_sort(list(i.name) FILTER (WHERE c.new_events > 0)) AS servers
  FROM compared c JOIN hx.server_ident i ON i.server_pk = c.server_pk
  GROUP BY c.epoch, c.account_pk
)
SELECT s.epoch, s.account_pk AS entity_pk, checks.account_label(a.name) AS entity_name, NULL::VARCHAR AS entity_key,
       NULL::VARCHAR AS server, 'critical' AS severity,
       CAST(s.new_events AS BIGINT) AS new_slow_consumers, CAST(s.slow_consumers AS BIGINT) AS slow_consumers,
       CAST(s.servers AS VARCHAR[]) AS servers,
       a.name = '$G' OR a.name IN (SELECT system_account FROM hx.server_opts WHERE system_account IS NOT NULL)
         AS server_links
FROM summed s JOIN hx.account_ident a ON a.account_pk = s.account_pk
WHERE s.new_events > 0`,
};
