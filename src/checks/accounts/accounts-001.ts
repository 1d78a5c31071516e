import type { Check } from "../check.ts";

/**
 * The limit is the account JWT's `limits.conn` (hx.account_stats.max_connections, the
 * highest any server holds). nats-server counts an account's clients on every server against
 * it (its own plus those the other servers report: 2.9.10 accounts.go,
 * MaxTotalConnectionsReached, which counts its leafnode connections too), so the account's
 * client and leafnode connections (STATZ total_conns) are summed over the servers; the
 * catalogue's worst single server is the detail's worst_server.
 */
export const accounts001: Check = {
  code: "accounts-001",
  name: "Account Connection Limit",
  description:
    "The account's client connections, counted over all servers, are close to the connection limit of its JWT (`limits.conn`). A server counts the account's clients on the other servers too: once the limit is reached, every new connection of the account, on any server, is refused with \"maximum account active connections exceeded\", and clients that reconnect after a network blip may not get back in.",
  remediation:
    "See the account's connections and where they are: `nats server report connections --account <account>` and `nats server report accounts`. Close idle or leaked connections (a client that opens a connection per request), share one connection per process, or raise the limit: `nsc edit account --name <account> --conns <n>` and `nsc push -a <account>`.",
  scope: "account",
  entityType: "account",
  severity: "warning",
  category: "saturation",
  optimization: false,
  params: [
    {
      name: "p_warn_percent",
      default: 90,
      description: "Fires when the account's client connections reach this percentage of its limit.",
    },
  ],
  detailColumns: [
    {
      name: "connections",
      type: "BIGINT",
      description: "Client and leafnode connections of the account, all servers.",
    },
    { name: "max_connections", type: "BIGINT", description: "The account JWT's connection limit." },
    { name: "used_pct", type: "DOUBLE", description: "connections as a percentage of max_connections." },
    {
      name: "worst_server",
      type: "VARCHAR",
      description: "Server with the most of the account's connections.",
    },
    {
      name: "worst_server_connections",
      type: "BIGINT",
      description: "The account's client and leafnode connections on worst_server.",
    },
  ],
  sql: `
WITH per_account AS (
  SELECT a.epoch, a.account_pk, sum(coalesce(a.total_conns, a.conns)) AS connections, max(a.max_connections) AS max_connections,
         arg_max(sv.name, coalesce(a.total_conns, a.conns)) AS worst_server,
         max(coalesce(a.total_conns, a.conns)) AS worst_server_connections
  FROM checks.epochs_in(ep_from, ep_to) e
  JOIN hx.account_stats a ON a.epoch = e.epoch
  ANTI JOIN checks.accounts_gone(ep_from, ep_to) g ON g.epoch = a.epoch AND g.account_pk = a.account_pk
  JOIN hx.server_ident sv ON sv.server_pk = a.server_pk
  GROUP BY a.epoch, a.account_pk
  HAVING max(a.max_connections) > 0
)
SELECT p.epoch, p.account_pk AS entity_pk, coalesce(nullif(o.name_tag, ''), i.name) AS entity_name,
       NULL::VARCHAR AS entity_key, NULL::VARCHAR AS server, 'warning' AS severity,
       CAST(p.connections AS BIGINT) AS connections, CAST(p.max_connections AS BIGINT) AS max_connections,
       CAST(100.0 * p.connections / p.max_connections AS DOUBLE) AS used_pct,
       p.worst_server, CAST(p.worst_server_connections AS BIGINT) AS worst_server_connections
FROM per_account p
JOIN hx.account_ident i ON i.account_pk = p.account_pk
ASOF LEFT JOIN hx.account_opts o ON o.account_pk = p.account_pk AND p.epoch >= o.epoch
WHERE 100.0 * p.connections >= p_warn_percent * p.max_connections`,
};
