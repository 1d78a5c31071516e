import type { Check } from "../check.ts";

/**
 * The stream's cluster is its raft group's (stream_stats.cluster, NULL on a standalone
 * server); the JetStream servers counted are those of that cluster that answered VARZ in
 * the same epoch with JetStream enabled. Read at the latest epoch in the window holding the
 * stream.
 */
export const optSys021: Check = {
  code: "opt-sys-021",
  name: "R1 Streams in Multi-Node Clusters",
  description:
    "A stream with a single replica lives in a cluster that has more than one JetStream server. Its messages exist on one server only: while that server is down or restarting the stream is unavailable (publishes fail, consumers stop), and a lost disk loses the stream, although the cluster could have kept copies elsewhere.",
  remediation:
    "If the data matters, replicate it: `nats stream edit <stream> --replicas=3` (the servers copy the stream in the background; make sure the cluster has the storage for the copies). R1 is fine for data that can be rebuilt or lost (caches, scratch streams); say so in the stream's description, or leave this optimization finding aside for it.",
  scope: "stream",
  entityType: "stream",
  severity: "info",
  category: "health",
  optimization: true,
  lookbackSeconds: 3600,
  params: [],
  detailColumns: [
    { name: "cluster", type: "VARCHAR", description: "Cluster the stream lives in." },
    { name: "js_servers", type: "BIGINT", description: "JetStream servers of that cluster in the epoch." },
  ],
  sql: `
WITH latest AS (
  SELECT s.stream_pk, max(s.epoch) AS epoch
  FROM hx.stream_stats s WHERE s.epoch BETWEEN ep_from AND ep_to GROUP BY s.stream_pk
),
single AS (
  SELECT s.epoch, s.stream_pk, s.leader_server_pk, s.cluster
  FROM latest l
  JOIN hx.stream_stats s ON s.stream_pk = l.stream_pk AND s.epoch = l.epoch
  ASOF JOIN hx.stream_opts o ON o.stream_pk = s.stream_pk AND s.epoch >= o.epoch
  WHERE s.epoch BETWEEN ep_from AND ep_to AND o.replicas = 1 AND s.cluster IS NOT NULL
),
js_servers AS (
  SELECT s.epoch, coalesce(o.cluster_name, i.cluster) AS cluster, count(*) AS js_servers
  FROM hx.server_stats s
  JOIN hx.server_ident i ON i.server_pk = s.server_pk
  ASOF JOIN hx.server_opts o ON o.server_pk = s.server_pk AND s.epoch >= o.epoch
  WHERE s.epoch BETWEEN ep_from AND ep_to AND o.jetstream AND s.epoch IN (SELECT epoch FROM single)
  GROUP BY ALL
)
SELECT r.epoch, r.stream_pk AS entity_pk, checks.stream_label(si.domain, si.account, si.name) AS entity_name, NULL::VARCHAR AS entity_key,
       sv.name AS server, 'info' AS severity, r.cluster, j.js_servers
FROM single r
JOIN js_servers j ON j.epoch = r.epoch AND j.cluster = r.cluster
JOIN hx.stream_ident si ON si.stream_pk = r.stream_pk
LEFT JOIN hx.server_ident sv ON sv.server_pk = r.leader_server_pk
WHERE j.js_servers > 1`,
};
