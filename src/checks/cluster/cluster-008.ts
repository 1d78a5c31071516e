import type { Check } from "../check.ts";
import { clusterPeersCte } from "./cluster-peers-sql.ts";

/**
 * Each server's set is the remote gateways its VARZ lists as configured, its own gateway
 * left out (a shared configuration may list it). The reference set is the one a strict
 * majority of the cluster's gateway servers share, each by its last VARZ answer of the past
 * hour (clusterPeersCte), so a server that missed the scrape neither drops the cluster below
 * three gateway servers nor turns the majority; without a strict majority, or with fewer than
 * three gateway servers, nothing is judged. A server is judged only in an epoch it answered VARZ.
 */
export const cluster008: Check = {
  code: "cluster-008",
  name: "Gateway Config Mismatch",
  description:
    "The set of remote gateways configured on the server differs from the set most servers of its cluster configure. Gateways are discovered and gossiped, so the mismatch may go unnoticed while every cluster is up, but when this server restarts or the gossip breaks it connects to a different set of clusters than its peers: messages to a cluster it lacks are not sent from it, and a cluster only it knows gets inconsistent connections.",
  remediation:
    "Compare `gateway { gateways: [...] }` in the configuration of every server of the cluster (VARZ `gateway.gateways`, or `nats server request variables <server>`) and make them list the same remote clusters with the same URLs; then reload each changed server (`nats-server --signal reload` or SIGHUP).",
  scope: "server",
  entityType: "server",
  severity: "warning",
  category: "consistency",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "cluster", type: "VARCHAR", description: "Gateway (cluster) name of the server." },
    { name: "gateways", type: "VARCHAR[]", description: "Remote gateways the server configures, sorted." },
    {
      name: "majority_gateways",
      type: "VARCHAR[]",
      description: "Remote gateways the majority of the cluster configures, sorted.",
    },
    { name: "missing", type: "VARCHAR[]", description: "Gateways of the majority the server lacks." },
    { name: "extra", type: "VARCHAR[]", description: "Gateways the server has that the majority lacks." },
    { name: "majority_servers", type: "INTEGER", description: "Servers sharing the majority's set." },
    {
      name: "gateway_servers",
      type: "INTEGER",
      description: "Gateway servers of the cluster (each by its last answer of the past hour).",
    },
  ],
  sql: `
WITH ${clusterPeersCte("peers")}, g AS (
  SELECT s.epoch, s.answered_epoch, s.server_pk, s.server, s.gateway_name AS cluster,
         list_sort(list_distinct(list_filter(coalesce(s.gateways, []), x -> x <> s.gateway_name))) AS remotes
  FROM peers s
  WHERE coalesce(s.gateway_name, '') <> ''
),
sets AS (
  SELECT epoch, cluster, remotes, count(*) AS n, sum(count(*)) OVER (PARTITION BY epoch, cluster) AS total
  FROM g GROUP BY epoch, cluster, remotes
),
majority AS (SELECT * FROM sets WHERE total >= 3 AND n * 2 > total)
SELECT g.epoch, g.server_pk AS entity_pk, g.server AS entity_name, NULL::VARCHAR AS entity_key, g.server,
       'warning' AS severity, g.cluster, CAST(g.remotes AS VARCHAR[]) AS gateways,
       CAST(m.remotes AS VARCHAR[]) AS majority_gateways,
       CAST(list_filter(m.remotes, x -> NOT list_contains(g.remotes, x)) AS VARCHAR[]) AS missing,
       CAST(list_filter(g.remotes, x -> NOT list_contains(m.remotes, x)) AS VARCHAR[]) AS extra,
       CAST(m.n AS INTEGER) AS majority_servers, CAST(m.total AS INTEGER) AS gateway_servers
FROM g JOIN majority m ON m.epoch = g.epoch AND m.cluster = g.cluster
WHERE g.answered_epoch = g.epoch AND g.remotes <> m.remotes`,
};
