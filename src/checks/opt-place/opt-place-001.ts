import type { Check } from "../check.ts";
import { ownConnectionsCte } from "../own-connections-sql.ts";

/**
 * The supercluster is the servers with a gateway configured; a cluster's share of an
 * account's clients is its servers' account STATZ `conns` over the account's total on all
 * of them, at the latest epoch of the window holding the account. An account leading no
 * stream anywhere in the supercluster is not judged (nothing to reach). One row per account
 * and client cluster (entity_key). natsmon's own connections (hx.own_connections)
 * are left out of the counts.
 */
export const optPlace001: Check = {
  code: "opt-place-001",
  name: "Cross-Cluster Stream Access",
  description:
    "A good share of an account's clients connect to a cluster where none of the account's streams has its leader. Every publish to a stream, every consumer fetch and acknowledgement and every stream or KV API call those clients make then crosses a gateway to another cluster and back: more latency per operation, gateway bandwidth spent on each message, and the clients stall whenever the gateway is down although their own cluster is up. natsmon's own connections (its scrape and service-discovery connections) are not counted as the account's clients.",
  remediation:
    "See where the account's clients are (`nats server report connections --account <account>`) and where its streams are led (`nats stream report`). Place streams where their clients are: create them with `--cluster <cluster>` (placement), move one with `nats stream edit <stream> --cluster <cluster>` (2.10+), or give the clients of that cluster a mirror of the stream to read from (`nats stream add --mirror <stream>` placed in their cluster). Otherwise connect those clients to the cluster that holds the streams.",
  scope: "account",
  entityType: "account",
  severity: "info",
  category: "performance",
  optimization: true,
  lookbackSeconds: 3600,
  params: [
    {
      name: "p_min_conn_pct",
      default: 10,
      description: "Share of the account's client connections, percent, a cluster needs to be judged.",
    },
    {
      name: "p_min_conn_count",
      default: 5,
      description: "Client connections of the account a cluster needs to be judged.",
    },
  ],
  detailColumns: [
    {
      name: "cluster",
      type: "VARCHAR",
      description: "Cluster the clients connect to, leading none of the account's streams.",
    },
    {
      name: "connections",
      type: "BIGINT",
      description: "Client connections of the account in that cluster.",
    },
    {
      name: "account_connections",
      type: "BIGINT",
      description: "Client connections of the account in the whole supercluster.",
    },
    {
      name: "connection_pct",
      type: "DOUBLE",
      description: "connections as a percentage of account_connections.",
    },
    {
      name: "stream_clusters",
      type: "VARCHAR[]",
      description: "Clusters where the account's streams have their leaders.",
    },
  ],
  sql: `
WITH gw AS (
  SELECT epoch, server_pk, cluster
  FROM hx.servers
  WHERE epoch BETWEEN ep_from AND ep_to AND gateway_name IS NOT NULL AND cluster IS NOT NULL
), latest AS (
  SELECT a.account_pk, max(a.epoch) AS epoch
  FROM hx.account_stats a
  JOIN gw ON gw.epoch = a.epoch AND gw.server_pk = a.server_pk
  WHERE a.epoch BETWEEN ep_from AND ep_to AND a.conns IS NOT NULL
  GROUP BY a.account_pk
), ${ownConnectionsCte("own")}, conns AS (
  SELECT a.epoch, a.account_pk, gw.cluster, sum(a.conns - coalesce(o.conns, 0)) AS conns
  FROM hx.account_stats a
  JOIN latest l ON l.account_pk = a.account_pk AND l.epoch = a.epoch
  JOIN gw ON gw.epoch = a.epoch AND gw.server_pk = a.server_pk
  LEFT JOIN own o ON o.epoch = a.epoch AND o.server_pk = a.server_pk AND o.account_pk = a.account_pk
  WHERE a.epoch BETWEEN ep_from AND ep_to AND a.conns IS NOT NULL
  GROUP BY ALL
), shares AS (
  SELECT *, sum(conns) OVER (PARTITION BY epoch, account_pk) AS total FROM conns
), led AS (
  SELECT l.epoch, l.account_pk, list_sort(list(DISTINCT gw.cluster)) AS clusters
  FROM hx.stream_stats st
  JOIN hx.stream_ident si ON si.stream_pk = st.stream_pk
  JOIN hx.account_ident ai ON ai.name = si.account
  JOIN latest l ON l.account_pk = ai.account_pk AND l.epoch = st.epoch
  JOIN gw ON gw.epoch = st.epoch AND gw.server_pk = st.leader_server_pk
  WHERE st.epoch BETWEEN ep_from AND ep_to AND st.epoch IN (SELECT epoch FROM latest)
  GROUP BY ALL
)
SELECT sh.epoch, sh.account_pk AS entity_pk, checks.account_label(ai.name) AS entity_name, sh.cluster AS entity_key, NULL::VARCHAR AS server,
       'info' AS severity, sh.cluster, CAST(sh.conns AS BIGINT) AS connections, CAST(sh.total AS BIGINT) AS account_connections,
       CAST(100.0 * sh.conns / sh.total AS DOUBLE) AS connection_pct, CAST(ld.clusters AS VARCHAR[]) AS stream_clusters
FROM shares sh
JOIN led ld ON ld.epoch = sh.epoch AND ld.account_pk = sh.account_pk
JOIN hx.account_ident ai ON ai.account_pk = sh.account_pk
WHERE NOT list_contains(ld.clusters, sh.cluster) AND sh.conns >= p_min_conn_count
  AND 100.0 * sh.conns >= p_min_conn_pct * sh.total`,
};
