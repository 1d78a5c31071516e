import type { Check } from "../check.ts";

/**
 * Leaders of replicated assets only (a stream with more than one replica, a consumer whose
 * own or inherited replica count is above one): an R1 asset has no election, so where it
 * sits is placement (opt-balance-004), not leadership. The cluster's average is over its
 * JetStream servers that answered JSZ at the epoch, those leading nothing included.
 */
export const optBalance001: Check = {
  code: "opt-balance-001",
  name: "Uneven Leader Distribution",
  description:
    "The server leads far more replicated streams and consumers than the average JetStream server of its cluster. A raft leader does the work of its group: it takes every write, replicates it to the followers and answers the API and consumer requests, so a server leading much more than its share carries more CPU, disk and network load than its peers while they idle, and every leader election after it restarts moves all of that at once.",
  remediation:
    "See the leaders per server with `nats server report jetstream` and the leader of each stream and consumer with `nats stream report` / `nats consumer report <stream>`. Move leaders away from the server with `nats stream cluster step-down <stream>` and `nats consumer cluster step-down <stream> <consumer>` (the group elects a new leader among the other replicas), or put the server in lame duck mode before maintenance so that it hands its leaderships over. Leaders pile up on the servers that stayed up after a rolling restart; step some down after each restart.",
  scope: "server",
  entityType: "server",
  severity: "info",
  category: "saturation",
  optimization: true,
  lookbackSeconds: 3600,
  params: [
    {
      name: "p_multiplier",
      default: 1.5,
      description: "Fires when the server leads more than this many times its cluster's average.",
    },
    {
      name: "p_min_servers",
      default: 3,
      description: "JetStream servers the cluster needs for its average to mean anything.",
    },
    {
      name: "p_min_leaders",
      default: 3,
      description: "Replicated streams and consumers the server must lead at least.",
    },
  ],
  detailColumns: [
    { name: "cluster", type: "VARCHAR", description: "Cluster of the server." },
    { name: "stream_leaders", type: "INTEGER", description: "Replicated streams the server leads." },
    { name: "consumer_leaders", type: "INTEGER", description: "Replicated consumers the server leads." },
    {
      name: "cluster_avg_leaders",
      type: "DOUBLE",
      description: "Average replicated streams plus consumers led per JetStream server of the cluster.",
    },
    { name: "ratio", type: "DOUBLE", description: "Leaders of the server over the cluster's average." },
    {
      name: "cluster_servers",
      type: "INTEGER",
      description: "JetStream servers of the cluster the average is over.",
    },
  ],
  sql: `
WITH answered AS (
  SELECT epoch, server_pk, server, cluster
  FROM hx.servers
  WHERE epoch BETWEEN ep_from AND ep_to AND cluster IS NOT NULL AND jetstream AND list_contains(sources, 'jsz')
), latest AS (
  SELECT server_pk, max(epoch) AS epoch FROM answered GROUP BY server_pk
), led AS (
  SELECT s.epoch, s.leader_server_pk AS server_pk, count(*) AS streams, 0 AS consumers
  FROM hx.streams s
  WHERE s.epoch BETWEEN ep_from AND ep_to AND s.epoch IN (SELECT epoch FROM latest) AND s.replicas > 1
  GROUP BY ALL
  UNION ALL
  SELECT c.epoch, c.leader_server_pk, 0, count(*)
  FROM hx.consumers c
  JOIN hx.streams s ON s.stream_pk = c.stream_pk AND s.epoch = c.epoch
  WHERE c.epoch BETWEEN ep_from AND ep_to AND c.epoch IN (SELECT epoch FROM latest)
    AND s.epoch BETWEEN ep_from AND ep_to
    AND CASE WHEN c.replicas > 0 THEN c.replicas ELSE s.replicas END > 1
  GROUP BY ALL
), counted AS (
  SELECT a.epoch, a.server_pk, a.server, a.cluster,
         coalesce(sum(l.streams), 0) AS stream_leaders, coalesce(sum(l.consumers), 0) AS consumer_leaders
  FROM answered a
  LEFT JOIN led l ON l.epoch = a.epoch AND l.server_pk = a.server_pk
  WHERE a.epoch IN (SELECT epoch FROM latest)
  GROUP BY ALL
), shares AS (
  SELECT *, stream_leaders + consumer_leaders AS leaders,
         avg(stream_leaders + consumer_leaders) OVER (PARTITION BY epoch, cluster) AS cluster_avg,
         count(*) OVER (PARTITION BY epoch, cluster) AS members
  FROM counted
)
SELECT sh.epoch, sh.server_pk AS entity_pk, sh.server AS entity_name, NULL::VARCHAR AS entity_key, sh.server,
       'info' AS severity, sh.cluster, CAST(sh.stream_leaders AS INTEGER) AS stream_leaders,
       CAST(sh.consumer_leaders AS INTEGER) AS consumer_leaders, CAST(sh.cluster_avg AS DOUBLE) AS cluster_avg_leaders,
       CAST(sh.leaders / sh.cluster_avg AS DOUBLE) AS ratio, CAST(sh.members AS INTEGER) AS cluster_servers
FROM shares sh
JOIN latest l ON l.server_pk = sh.server_pk AND l.epoch = sh.epoch
WHERE sh.members >= p_min_servers AND sh.leaders >= p_min_leaders AND sh.leaders > p_multiplier * sh.cluster_avg`,
};
