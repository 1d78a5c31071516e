import type { Check } from "../check.ts";
import { ownConnectionsCte } from "../own-connections-sql.ts";

/**
 * The account's clients are counted per cluster of the supercluster (servers with a gateway
 * configured, account STATZ `conns`) at the latest epoch of the window where the consumer
 * has a leader; a cluster holding at least p_min_dominance_pct of them is where most of
 * them are. The leader's cluster is its server's. natsmon's own connections (hx.own_connections)
 * are left out of the counts.
 */
export const optPlace002: Check = {
  code: "opt-place-002",
  name: "Consumer Leader Not Co-located",
  description:
    "The consumer's leader is in another cluster than the one most of its account's clients connect to. The leader delivers every message and takes every acknowledgement and pull request, so each of them crosses a gateway between the clients and the leader: more latency per message, gateway bandwidth for the whole delivery stream, and no delivery at all while the gateway is down. natsmon's own connections (its scrape and service-discovery connections) are not counted as the account's clients.",
  remediation:
    "See where the consumer is led with `nats consumer info <stream> <consumer>` and where the account's clients are with `nats server report connections --account <account>`. A consumer is led by one of its stream's replicas, so place the stream where the clients are (`--cluster` at creation, `nats stream edit <stream> --cluster <cluster>` on 2.10+), give that cluster a mirror of the stream and consume from it, or connect the consuming clients to the consumer's cluster.",
  scope: "consumer",
  entityType: "consumer",
  severity: "info",
  category: "performance",
  optimization: true,
  lookbackSeconds: 3600,
  params: [
    {
      name: "p_min_conns",
      default: 5,
      description: "Client connections the account needs in the supercluster to be judged.",
    },
    {
      name: "p_min_dominance_pct",
      default: 60,
      description:
        "Share of the account's client connections, percent, that makes a cluster the one its clients are in.",
    },
  ],
  detailColumns: [
    { name: "leader_cluster", type: "VARCHAR", description: "Cluster of the consumer's leader." },
    {
      name: "client_cluster",
      type: "VARCHAR",
      description: "Cluster most of the account's clients connect to.",
    },
    {
      name: "client_cluster_pct",
      type: "DOUBLE",
      description: "Share of the account's client connections in client_cluster, percent.",
    },
    {
      name: "account_connections",
      type: "BIGINT",
      description: "Client connections of the account in the whole supercluster.",
    },
  ],
  sql: `
WITH latest AS (
  SELECT consumer_pk, max(epoch) AS epoch
  FROM hx.consumer_stats
  WHERE epoch BETWEEN ep_from AND ep_to AND leader_server_pk IS NOT NULL
  GROUP BY consumer_pk
), gw AS (
  SELECT epoch, server_pk, server, cluster
  FROM hx.servers
  WHERE epoch BETWEEN ep_from AND ep_to AND epoch IN (SELECT epoch FROM latest)
    AND gateway_name IS NOT NULL AND cluster IS NOT NULL
), ${ownConnectionsCte("own")}, conns AS (
  SELECT a.epoch, a.account_pk, gw.cluster, sum(a.conns - coalesce(o.conns, 0)) AS conns
  FROM hx.account_stats a
  JOIN gw ON gw.epoch = a.epoch AND gw.server_pk = a.server_pk
  LEFT JOIN own o ON o.epoch = a.epoch AND o.server_pk = a.server_pk AND o.account_pk = a.account_pk
  WHERE a.epoch BETWEEN ep_from AND ep_to AND a.conns IS NOT NULL
  GROUP BY ALL
), ranked AS (
  SELECT *, sum(conns) OVER w AS total, max(conns) OVER w AS top
  FROM conns
  WINDOW w AS (PARTITION BY epoch, account_pk)
), dominant AS (
  -- The one cluster with more of the account's clients than any other: a tie has none.
  SELECT * EXCLUDE (top) FROM ranked
  WHERE conns = top
  QUALIFY count(*) OVER (PARTITION BY epoch, account_pk) = 1
)
SELECT c.epoch, c.consumer_pk AS entity_pk, checks.consumer_label(c.domain, c.account, c.stream, c.consumer) AS entity_name,
       NULL::VARCHAR AS entity_key, ls.server, 'info' AS severity, ls.cluster AS leader_cluster,
       d.cluster AS client_cluster, CAST(100.0 * d.conns / d.total AS DOUBLE) AS client_cluster_pct,
       CAST(d.total AS BIGINT) AS account_connections
FROM latest l
JOIN hx.consumers c ON c.consumer_pk = l.consumer_pk AND c.epoch = l.epoch
JOIN hx.account_ident ai ON ai.name = c.account
JOIN dominant d ON d.epoch = c.epoch AND d.account_pk = ai.account_pk
JOIN gw ls ON ls.epoch = c.epoch AND ls.server_pk = c.leader_server_pk
WHERE c.epoch BETWEEN ep_from AND ep_to AND c.epoch IN (SELECT epoch FROM latest) AND d.total >= p_min_conns
  AND 100.0 * d.conns >= p_min_dominance_pct * d.total AND ls.cluster <> d.cluster`,
};
