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
 * - no leader answered: the replicas whose server did not answer with its copy of the stream
 *   are counted as down. It takes more than half of the replicas missing from the epoch to
 *   fire, so a leader election among servers that all answer, or one missed reply, does not.
 */
export const jetstream008: Check = {
  code: "jetstream-008",
  name: "Stream Quorum Lost",
  description:
    "A replicated stream has too few replicas up to form a raft quorum (floor(R/2)+1 of its R replicas). Without quorum it has no leader, or a leader that cannot commit: publishes to it fail or time out and its consumers stop delivering. Counted from the leader's view of its peers while the leader answers; when no leader answers, the replicas whose servers did not answer this epoch count as down.",
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
        "Replicas counted as down: peers the leader reports offline, or without a leader the replicas whose server did not answer.",
    },
    {
      name: "replicas_online",
      type: "VARCHAR[]",
      description:
        "Servers holding a replica that is up: the leader and the peers it reports online, or the servers that answered.",
    },
  ],
  sql: `
WITH led AS (
  SELECT s.epoch, s.stream_pk, s.account, s.stream, s.leader, s.replicas, s.replicas_offline AS offline
  FROM hx.streams s
  WHERE s.epoch BETWEEN ep_from AND ep_to AND s.replicas > 1
    AND s.replicas - s.replicas_offline < s.replicas // 2 + 1
), led_rows AS (
  SELECT l.*, list(r.server ORDER BY r.server) FILTER (WHERE r.offline = false) AS online
  FROM led l
  LEFT JOIN (SELECT epoch, stream_pk, server, offline FROM hx.stream_replicas WHERE epoch BETWEEN ep_from AND ep_to) r
    ON r.stream_pk = l.stream_pk AND r.epoch = l.epoch
  GROUP BY ALL
), answering AS (
  -- Streams no leader answered for: the replicas that did answer, each with its own copy.
  SELECT rs.epoch, ri.stream_pk, list(sv.name ORDER BY sv.name) AS online
  FROM hx.stream_replica_stats rs
  JOIN hx.stream_replica_ident ri ON ri.stream_replica_pk = rs.stream_replica_pk
  JOIN hx.server_ident sv ON sv.server_pk = ri.server_pk
  ANTI JOIN (SELECT stream_pk, epoch FROM hx.stream_stats WHERE epoch BETWEEN ep_from AND ep_to) t
    ON t.stream_pk = ri.stream_pk AND t.epoch = rs.epoch
  WHERE rs.epoch BETWEEN ep_from AND ep_to AND rs.answered
  GROUP BY rs.epoch, ri.stream_pk
), unled AS (
  SELECT a.epoch, a.stream_pk, si.account, si.name AS stream, NULL::VARCHAR AS leader, o.replicas,
         CAST(o.replicas - len(a.online) AS INTEGER) AS offline, a.online
  FROM answering a
  JOIN hx.stream_ident si ON si.stream_pk = a.stream_pk
  ASOF JOIN hx.stream_opts o ON o.stream_pk = a.stream_pk AND a.epoch >= o.epoch
  WHERE o.replicas > 1 AND len(a.online) < o.replicas // 2 + 1
), lost AS (
  SELECT epoch, stream_pk, account, stream, leader, leader AS server, replicas, offline, online FROM led_rows
  UNION ALL
  SELECT epoch, stream_pk, account, stream, leader, online[1] AS server, replicas, offline, online FROM unled
)
SELECT epoch, stream_pk AS entity_pk, account || '/' || stream AS entity_name, NULL::VARCHAR AS entity_key,
       server, 'critical' AS severity, leader, CAST(replicas AS INTEGER) AS replicas,
       CAST(replicas // 2 + 1 AS INTEGER) AS quorum, CAST(offline AS INTEGER) AS replicas_offline,
       coalesce(online, [])::VARCHAR[] AS replicas_online
FROM lost`,
};
