import type { Check } from "../check.ts";

/**
 * Subscriptions of the server's own client connections (CONNZ): VARZ `subscriptions` also
 * counts the interest other servers propagate over routes, which every server of a cluster
 * holds alike, so it hides a hotspot. A server whose CONNZ did not come (VARZ counts
 * connections, CONNZ lists none) is left out of the average; one without clients counts 0.
 */
export const optBalance003: Check = {
  code: "opt-balance-003",
  name: "Subscription Hotspot",
  description:
    "The client connections of the server hold more than twice as many subscriptions as the average server of its cluster. Every message published to the cluster is matched against the subscriptions of each server that has interest, so a server holding most of them does most of the matching, fan-out and delivery work, and its subscription interest is what routes and gateways propagate.",
  remediation:
    "See which connections hold the subscriptions with `nats server report connections --sort subs` and the totals per server with `nats server list`. Spread the subscribing clients over the cluster (give them every server's URL), replace many per-entity subscriptions by wildcard subscriptions, use queue groups instead of one subscription per worker on one server, and unsubscribe what is no longer read (short-lived request inboxes left open are a common cause).",
  scope: "server",
  entityType: "server",
  severity: "info",
  category: "saturation",
  optimization: true,
  lookbackSeconds: 3600,
  params: [
    {
      name: "p_multiplier",
      default: 2,
      description:
        "Fires when the server holds more than this many times its cluster's average of subscriptions.",
    },
    {
      name: "p_min_subscriptions",
      default: 100,
      description: "Client subscriptions the server must hold at least.",
    },
  ],
  detailColumns: [
    { name: "cluster", type: "VARCHAR", description: "Cluster of the server." },
    {
      name: "subscriptions",
      type: "BIGINT",
      description: "Subscriptions of the server's client connections (CONNZ).",
    },
    { name: "connections", type: "BIGINT", description: "Client connections holding them." },
    {
      name: "cluster_avg_subscriptions",
      type: "DOUBLE",
      description: "Average client subscriptions per server of the cluster.",
    },
    { name: "ratio", type: "DOUBLE", description: "Subscriptions of the server over the cluster's average." },
    { name: "cluster_servers", type: "INTEGER", description: "Servers of the cluster the average is over." },
  ],
  sql: `
WITH answered AS (
  SELECT epoch, server_pk, server, cluster, connections AS varz_connections
  FROM hx.servers
  WHERE epoch BETWEEN ep_from AND ep_to AND cluster IS NOT NULL AND connections IS NOT NULL
), latest AS (
  SELECT server_pk, max(epoch) AS epoch FROM answered GROUP BY server_pk
), subs AS (
  SELECT cs.epoch, ci.server_pk, sum(cs.subscriptions) AS subscriptions, count(*) AS connections
  FROM hx.connection_stats cs
  JOIN hx.connection_ident ci ON ci.connection_pk = cs.connection_pk
  WHERE cs.epoch BETWEEN ep_from AND ep_to AND cs.epoch IN (SELECT epoch FROM latest)
  GROUP BY ALL
), shares AS (
  SELECT a.epoch, a.server_pk, a.server, a.cluster, coalesce(s.subscriptions, 0) AS subscriptions,
         coalesce(s.connections, 0) AS connections,
         avg(coalesce(s.subscriptions, 0)) OVER (PARTITION BY a.epoch, a.cluster) AS cluster_avg,
         count(*) OVER (PARTITION BY a.epoch, a.cluster) AS members
  FROM answered a
  LEFT JOIN subs s ON s.epoch = a.epoch AND s.server_pk = a.server_pk
  WHERE a.epoch IN (SELECT epoch FROM latest) AND (a.varz_connections = 0 OR s.connections > 0)
)
SELECT sh.epoch, sh.server_pk AS entity_pk, sh.server AS entity_name, NULL::VARCHAR AS entity_key, sh.server,
       'info' AS severity, sh.cluster, CAST(sh.subscriptions AS BIGINT) AS subscriptions,
       CAST(sh.connections AS BIGINT) AS connections, CAST(sh.cluster_avg AS DOUBLE) AS cluster_avg_subscriptions,
       CAST(sh.subscriptions / sh.cluster_avg AS DOUBLE) AS ratio, CAST(sh.members AS INTEGER) AS cluster_servers
FROM shares sh
JOIN latest l ON l.server_pk = sh.server_pk AND l.epoch = sh.epoch
WHERE sh.members >= 2 AND sh.subscriptions >= p_min_subscriptions AND sh.subscriptions > p_multiplier * sh.cluster_avg`,
};
