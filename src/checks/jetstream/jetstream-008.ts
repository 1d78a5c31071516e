import type { Check } from "../check.ts";

/**
 * Quorum is raft's: floor(R/2) + 1 replicas must be up. For odd R (R3, R5) that is the
 * catalogue's `offline * 2 > replicas`; for even R it also counts an R2 stream with one replica
 * down (or an R4 with two), which cannot commit a write either.
 *
 * Which replicas are down is read two ways, because a stream that lost quorum soon has no
 * leader to ask (measured on a 2.9.10 cluster with an R3 stream and two of three servers
 * stopped: a surviving leader keeps the lead for about 20 s, listing both peers offline, then
 * steps down; a surviving follower names the lost leader for a few seconds, then none):
 * - the leader answered: the peers it reports offline (JSZ cluster.replicas[].offline);
 * - no leader answered: the peers the answering replicas report offline in their own copy
 *   (every server lists the group's peers with that flag, leader or not), the most any of
 *   them reports. What the servers say, not which replies reached natsmon: replies missing
 *   from an epoch (a scrape gap, natsmon cut off from some servers) fire nothing.
 * Either way the flag comes from the server's liveness tracking: a server that shuts down
 * announces it at once; one killed outright is flagged only once it is missed.
 */
export const jetstream008: Check = {
  code: "jetstream-008",
  name: "Stream Quorum Lost",
  description:
    "A replicated stream has too few replicas up to form a raft quorum (floor(R/2)+1 of its R replicas). Without quorum it has no leader, or a leader that cannot commit: publishes to it fail or time out and its consumers stop delivering. Counted from the leader's view of its peers while the leader answers, else from the view of the replicas that still answer.",
  remediation:
    "Bring the servers holding the missing replicas back (`nats server list` and `nats stream info <stream>`, Cluster section, show which are offline). Once a majority is up the replicas elect a leader by themselves. If a server is gone for good, remove it from the cluster with `nats server raft peer-remove <server>` so that new replicas are placed elsewhere. The stream cannot be edited (scaled down, moved) while it has no quorum: its configuration changes need a leader.",
  scope: "stream",
  entityType: "stream",
  severity: "critical",
  category: "health",
  optimization: false,
  params: [],
  detailColumns: [
    {
      name: "leader",
      type: "VARCHAR",
      description: "Stream leader whose view of its peers was counted; NULL when no leader answered.",
    },
    { name: "replicas", type: "INTEGER", description: "Replicas the stream is configured with." },
    { name: "quorum", type: "INTEGER", description: "Replicas needed for quorum: floor(replicas / 2) + 1." },
    {
      name: "replicas_offline",
      type: "INTEGER",
      description:
        "Replicas counted as down: peers the leader reports offline, or without a leader the most peers an answering replica reports offline.",
    },
    {
      name: "replicas_online",
      type: "VARCHAR[]",
      description:
        "Servers holding a replica that is up: the leader and the peers it reports online, or without a leader the replicas that answered.",
    },
  ],
  // Streams with an offline peer are few: they are found first, named last.
  sql: `
WITH led AS (
  SELECT ss.epoch, ss.stream_pk, ss.leader_server_pk, o.replicas, ss.replicas_offline AS offline
  FROM (SELECT epoch, stream_pk, leader_server_pk, replicas_offline FROM hx.stream_stats
        WHERE epoch BETWEEN ep_from AND ep_to AND replicas_offline > 0) ss
  ASOF JOIN hx.stream_opts o ON o.stream_pk = ss.stream_pk AND ss.epoch >= o.epoch
  WHERE o.replicas > 1 AND o.replicas - ss.replicas_offline < o.replicas // 2 + 1
), unled AS (
  SELECT c.epoch, c.stream_pk, NULL::INTEGER AS leader_server_pk, o.replicas, c.offline
  FROM (
    SELECT rs.epoch, ri.stream_pk, max(rs.peers_offline_seen) AS offline
    FROM hx.stream_replica_stats rs
    JOIN hx.stream_replica_ident ri ON ri.stream_replica_pk = rs.stream_replica_pk
    WHERE rs.epoch BETWEEN ep_from AND ep_to AND rs.answered AND rs.peers_offline_seen > 0
    GROUP BY ALL
  ) c
  ANTI JOIN (SELECT stream_pk, epoch FROM hx.stream_stats WHERE epoch BETWEEN ep_from AND ep_to) t
    ON t.stream_pk = c.stream_pk AND t.epoch = c.epoch
  ASOF JOIN hx.stream_opts o ON o.stream_pk = c.stream_pk AND c.epoch >= o.epoch
  WHERE o.replicas > 1 AND o.replicas - c.offline < o.replicas // 2 + 1
), lost AS (
  SELECT * FROM led UNION ALL SELECT * FROM unled
), online AS (
  -- The replicas up: the leader's view where it answered, else the replicas that answered.
  SELECT l.epoch, l.stream_pk, list(sv.name ORDER BY sv.name) AS names
  FROM lost l
  JOIN hx.stream_replica_ident ri ON ri.stream_pk = l.stream_pk
  JOIN hx.stream_replica_stats rs ON rs.stream_replica_pk = ri.stream_replica_pk AND rs.epoch = l.epoch
  JOIN hx.server_ident sv ON sv.server_pk = ri.server_pk
  WHERE rs.epoch BETWEEN ep_from AND ep_to
    AND CASE WHEN l.leader_server_pk IS NULL THEN rs.answered ELSE rs.offline = false END
  GROUP BY ALL
)
SELECT l.epoch, l.stream_pk AS entity_pk, checks.stream_label(si.domain, si.account, si.name) AS entity_name, NULL::VARCHAR AS entity_key,
       coalesce(ld.name, n.names[1]) AS server, 'critical' AS severity, ld.name AS leader,
       CAST(l.replicas AS INTEGER) AS replicas, CAST(l.replicas // 2 + 1 AS INTEGER) AS quorum,
       CAST(l.offline AS INTEGER) AS replicas_offline, coalesce(n.names, [])::VARCHAR[] AS replicas_online
FROM lost l
JOIN hx.stream_ident si ON si.stream_pk = l.stream_pk
LEFT JOIN hx.server_ident ld ON ld.server_pk = l.leader_server_pk
LEFT JOIN online n ON n.epoch = l.epoch AND n.stream_pk = l.stream_pk`,
};
