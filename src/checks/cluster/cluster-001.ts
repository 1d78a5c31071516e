import type { Check } from "../check.ts";
import { clusterPeersCte } from "./cluster-peers-sql.ts";

/**
 * The cluster's average includes the server itself (the catalogue's "average of its
 * cluster"), over the servers of the cluster the epoch expected, each by its last VARZ answer
 * of the past hour (clusterPeersCte): a peer that missed the scrape neither lowers nor raises
 * the average; a cluster of one has no outlier. With two servers, 1.5× the average means
 * three times the other one. A server is judged only in an epoch it answered VARZ.
 */
export const cluster001: Check = {
  code: "cluster-001",
  name: "Memory Usage Outlier",
  description:
    "The server's resident memory (VARZ `mem`) is well above the average of the servers of its cluster. Servers of one cluster usually carry a similar load; one using much more memory holds more than its share: many more client connections or subscriptions, the leadership of many JetStream streams and consumers, large memory-storage streams, or slow consumers whose pending buffers grow. It is the server that runs out of memory first.",
  remediation:
    "Compare the servers: `nats server list` (memory, connections, subscriptions) and `nats server report jetstream` (streams, consumers and memory storage per server). Spread clients across the cluster (give clients every server's URL, not one), move stream and consumer leaders away with `nats stream cluster step-down` / `nats consumer cluster step-down`, look for slow consumers (natsmon's conn-002 and accounts-002 findings), and take a memory profile (`nats server request profilez`) if none of these explains it.",
  scope: "server (in cluster)",
  entityType: "server",
  severity: "warning",
  category: "saturation",
  optimization: false,
  params: [
    {
      name: "p_multiplier",
      default: 1.5,
      description: "Fires when the server's memory is above this many times its cluster's average.",
    },
    {
      name: "p_min_excess_bytes",
      default: 67_108_864,
      description:
        "And only when it is also at least this many bytes above the average (default 64 MiB): small servers differ by large ratios for little memory.",
    },
  ],
  detailColumns: [
    { name: "cluster", type: "VARCHAR", description: "Cluster of the server." },
    { name: "mem_bytes", type: "BIGINT", description: "Resident memory of the server, bytes." },
    {
      name: "cluster_avg_bytes",
      type: "DOUBLE",
      description:
        "Average resident memory of the cluster's servers, each by its last answer of the past hour, bytes.",
    },
    { name: "ratio", type: "DOUBLE", description: "Memory of the server over the cluster's average." },
    { name: "cluster_servers", type: "INTEGER", description: "Servers of the cluster the average is over." },
    {
      name: "excess_bytes",
      type: "BIGINT",
      description: "Memory of the server above the cluster's average, bytes.",
    },
  ],
  sql: `
WITH ${clusterPeersCte("peers")}, m AS (
  SELECT p.epoch, p.answered_epoch, p.server_pk, p.server, p.cluster, p.mem,
         avg(p.mem) OVER (PARTITION BY p.epoch, p.cluster) AS cluster_avg,
         count(*) OVER (PARTITION BY p.epoch, p.cluster) AS members
  FROM peers p
  WHERE p.cluster IS NOT NULL AND p.mem IS NOT NULL
)
SELECT epoch, server_pk AS entity_pk, server AS entity_name, NULL::VARCHAR AS entity_key, server,
       'warning' AS severity, cluster, CAST(mem AS BIGINT) AS mem_bytes, CAST(cluster_avg AS DOUBLE) AS cluster_avg_bytes,
       CAST(mem / cluster_avg AS DOUBLE) AS ratio, CAST(members AS INTEGER) AS cluster_servers,
       CAST(mem - cluster_avg AS BIGINT) AS excess_bytes
FROM m
WHERE answered_epoch = epoch AND members >= 2 AND cluster_avg > 0 AND mem > p_multiplier * cluster_avg AND mem - cluster_avg >= p_min_excess_bytes`,
};
