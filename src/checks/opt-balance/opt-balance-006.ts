import type { Check } from "../check.ts";
import { ownConnectionsCte } from "../own-connections-sql.ts";

/**
 * Account STATZ `conns` (client connections; leafnode connections apart) of each account on
 * each server, summed per cluster. A cluster's servers are those that answered VARZ at the
 * latest epoch of the window holding the server; one row per account and server. natsmon's own connections (hx.own_connections)
 * are left out of the counts.
 */
export const optBalance006: Check = {
  code: "opt-balance-006",
  name: "Account Connection Concentration",
  description:
    "One server holds most of an account's client connections within its cluster, although the cluster has other servers. The account's applications then depend on that one server: when it restarts or is partitioned, most of them disconnect together and reconnect in a storm, and the server does most of the account's work while its peers idle. natsmon's own connections (its scrape and service-discovery connections) are not counted as the account's clients.",
  remediation:
    "See where the account's clients are with `nats server report connections --account <account>` (or `nats server report accounts`). Give the account's clients the URLs of every server of the cluster, check load balancers or DNS entries that prefer one server, and restart the clients a few at a time so that they spread (connections do not move by themselves once made).",
  scope: "server x account",
  entityType: "account",
  severity: "info",
  category: "saturation",
  optimization: true,
  lookbackSeconds: 3600,
  params: [
    {
      name: "p_max_share_pct",
      default: 70,
      description:
        "Fires when one server holds more than this percentage of the account's connections in its cluster.",
    },
    {
      name: "p_min_servers",
      default: 3,
      description: "Servers the cluster needs (fewer give the clients little choice).",
    },
    {
      name: "p_min_connections",
      default: 10,
      description: "Connections of the account in the cluster below which it never fires.",
    },
  ],
  detailColumns: [
    { name: "cluster", type: "VARCHAR", description: "Cluster of the server." },
    { name: "connections", type: "BIGINT", description: "Client connections of the account on the server." },
    {
      name: "cluster_connections",
      type: "BIGINT",
      description: "Client connections of the account on all servers of the cluster.",
    },
    { name: "share_pct", type: "DOUBLE", description: "connections as a percentage of cluster_connections." },
    { name: "cluster_servers", type: "INTEGER", description: "Servers of the cluster that answered." },
  ],
  sql: `
WITH answered AS (
  SELECT epoch, server_pk, server, cluster
  FROM hx.servers
  WHERE epoch BETWEEN ep_from AND ep_to AND cluster IS NOT NULL AND connections IS NOT NULL
), latest AS (
  SELECT server_pk, max(epoch) AS epoch FROM answered GROUP BY server_pk
), members AS (
  SELECT epoch, cluster, count(*) AS servers
  FROM answered WHERE epoch IN (SELECT epoch FROM latest) GROUP BY ALL
), ${ownConnectionsCte("own")}, clients AS (
  SELECT a.epoch, a.account_pk, a.server_pk, a.conns - coalesce(o.conns, 0) AS conns
  FROM hx.account_stats a
  LEFT JOIN own o ON o.epoch = a.epoch AND o.server_pk = a.server_pk AND o.account_pk = a.account_pk
  WHERE a.epoch BETWEEN ep_from AND ep_to AND a.epoch IN (SELECT epoch FROM latest) AND a.conns IS NOT NULL
), shares AS (
  SELECT a.epoch, a.account_pk, s.server_pk, s.server, s.cluster, a.conns,
         sum(a.conns) OVER (PARTITION BY a.epoch, a.account_pk, s.cluster) AS cluster_conns
  FROM clients a
  JOIN answered s ON s.epoch = a.epoch AND s.server_pk = a.server_pk
)
SELECT sh.epoch, sh.account_pk AS entity_pk, checks.account_label(ai.name) AS entity_name, sh.server AS entity_key, sh.server,
       'info' AS severity, sh.cluster, sh.conns AS connections, CAST(sh.cluster_conns AS BIGINT) AS cluster_connections,
       CAST(100.0 * sh.conns / sh.cluster_conns AS DOUBLE) AS share_pct, CAST(m.servers AS INTEGER) AS cluster_servers
FROM shares sh
JOIN latest l ON l.server_pk = sh.server_pk AND l.epoch = sh.epoch
JOIN members m ON m.epoch = sh.epoch AND m.cluster = sh.cluster
JOIN hx.account_ident ai ON ai.account_pk = sh.account_pk
WHERE m.servers >= p_min_servers AND sh.cluster_conns >= p_min_connections
  AND 100.0 * sh.conns > p_max_share_pct * sh.cluster_conns`,
};
