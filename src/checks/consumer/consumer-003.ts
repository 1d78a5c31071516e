import type { Check } from "../check.ts";
import { CONSUMER_NAME, MAYBE_DOWN, replicasCte } from "./consumer-sql.ts";

export const consumer003: Check = {
  code: "consumer-003",
  name: "Consumer Quorum Lost",
  description:
    "So many replicas of a replicated consumer are down (flagged offline by its leader, or no longer current while their servers do not answer) that fewer than a majority of them are online. Without a quorum the consumer cannot record deliveries or acknowledgements: clients stop receiving messages from it, acks are not persisted, and the leader will step down. The figures come from the leader's reply while the leader answers; once it has stepped down (or is itself one of the servers that went away), from the replicas that still answer, each of which lists the peers it sees offline.",
  remediation:
    "Bring the offline servers back first (`nats server list`, their logs, `nats server report jetstream`): the consumer recovers by itself once a majority of its replicas is online. If servers are lost for good, remove them with `nats server raft peer-remove <server>` and, if the consumer cannot elect a leader, recreate it from a backup or with the same configuration (`nats consumer add --config`).",
  scope: "consumer",
  entityType: "consumer",
  severity: "critical",
  category: "health",
  optimization: false,
  params: [],
  detailColumns: [
    {
      name: "leader",
      type: "VARCHAR",
      description: "Consumer leader whose reply reports the replicas; NULL when no leader answered.",
    },
    {
      name: "replicas",
      type: "INTEGER",
      description:
        "Replicas in the consumer's raft group: the peers its leader lists, itself included; without a leader, the replicas configured (the stream's when the consumer sets none).",
    },
    {
      name: "replicas_down",
      type: "INTEGER",
      description:
        "Replicas that are down: flagged offline by the leader, or not current while their server does not answer (see consumer-001); without a leader, the most peers an answering replica lists offline.",
    },
    {
      name: "quorum",
      type: "INTEGER",
      description: "Replicas that must be online for a quorum: replicas / 2 + 1.",
    },
    {
      name: "down_servers",
      type: "VARCHAR[]",
      description:
        "Servers holding the replicas that are down; NULL without a leader (the replicas report how many peers are offline, not which).",
    },
  ],
  // Quorum is a majority of the group: online < replicas / 2 + 1. For odd groups that is the
  // catalogue's offline * 2 > replicas; for R2 one replica down already loses it.
  sql: `
WITH ${replicasCte(MAYBE_DOWN)},
down AS (
  SELECT epoch, consumer_pk, count(*) AS down, list(server ORDER BY server) AS down_servers
  FROM replicas
  WHERE down
  GROUP BY epoch, consumer_pk
),
peers AS (
  SELECT r.epoch, i.consumer_pk, count(*) FILTER (WHERE r.offline IS NOT NULL) AS replicas
  FROM hx.consumer_replica_stats r
  JOIN hx.consumer_replica_ident i ON i.consumer_replica_pk = r.consumer_replica_pk
  WHERE r.epoch BETWEEN ep_from AND ep_to AND i.consumer_pk IN (SELECT consumer_pk FROM down)
  GROUP BY r.epoch, i.consumer_pk
),
led AS (
  SELECT p.epoch, p.consumer_pk, c.leader_server_pk, NULL::INTEGER AS reporter_pk, p.replicas, d.down,
         d.down_servers
  FROM peers p
  JOIN down d ON d.epoch = p.epoch AND d.consumer_pk = p.consumer_pk
  JOIN hx.consumer_stats c ON c.epoch = p.epoch AND c.consumer_pk = p.consumer_pk AND c.epoch BETWEEN ep_from AND ep_to
  WHERE p.replicas > 1 AND p.replicas - d.down < p.replicas // 2 + 1
),
unled AS (
  -- No leader answered: the most peers an answering replica lists offline in its own copy,
  -- against the replicas configured (0: as many as the stream).
  SELECT * FROM (
    SELECT u.epoch, u.consumer_pk, NULL::INTEGER AS leader_server_pk, u.reporter_pk,
           CASE WHEN o.replicas > 0 THEN o.replicas ELSE so.replicas END AS replicas, u.down,
           NULL::VARCHAR[] AS down_servers
    FROM (
      SELECT r.epoch, i.consumer_pk, max(r.peers_offline_seen) AS down,
             arg_max(i.server_pk, r.peers_offline_seen) AS reporter_pk
      FROM hx.consumer_replica_stats r
      JOIN hx.consumer_replica_ident i ON i.consumer_replica_pk = r.consumer_replica_pk
      WHERE r.epoch BETWEEN ep_from AND ep_to AND r.answered AND r.peers_offline_seen > 0
      GROUP BY ALL
    ) u
    ANTI JOIN (SELECT consumer_pk, epoch FROM hx.consumer_stats WHERE epoch BETWEEN ep_from AND ep_to) t
      ON t.consumer_pk = u.consumer_pk AND t.epoch = u.epoch
    JOIN hx.consumer_ident ci ON ci.consumer_pk = u.consumer_pk
    ASOF JOIN hx.consumer_opts o ON o.consumer_pk = u.consumer_pk AND u.epoch >= o.epoch
    ASOF JOIN hx.stream_opts so ON so.stream_pk = ci.stream_pk AND u.epoch >= so.epoch
  )
  WHERE replicas > 1 AND replicas - down < replicas // 2 + 1
),
lost AS (
  SELECT * FROM led UNION ALL SELECT * FROM unled
)
SELECT p.epoch, p.consumer_pk AS entity_pk, ${CONSUMER_NAME} AS entity_name, NULL::VARCHAR AS entity_key,
       coalesce(l.name, rp.name) AS server, 'critical' AS severity, l.name AS leader,
       CAST(p.replicas AS INTEGER) AS replicas, CAST(p.down AS INTEGER) AS replicas_down,
       CAST(p.replicas // 2 + 1 AS INTEGER) AS quorum, CAST(p.down_servers AS VARCHAR[]) AS down_servers
FROM lost p
JOIN hx.consumer_ident ci ON ci.consumer_pk = p.consumer_pk
JOIN hx.stream_ident si ON si.stream_pk = ci.stream_pk
LEFT JOIN hx.server_ident l ON l.server_pk = p.leader_server_pk
LEFT JOIN hx.server_ident rp ON rp.server_pk = p.reporter_pk`,
};
