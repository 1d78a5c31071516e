import type { Check } from "../check.ts";

export const jetstream001: Check = {
  code: "jetstream-001",
  name: "Stream Replica Lag",
  description:
    "A follower replica of a replicated stream holds a last sequence more than 10% behind the stream leader's: it is missing recent messages. A follower that far behind cannot take over as leader without losing them, and while it catches up it adds load to the leader.",
  remediation:
    "Look at the replica's server (disk, CPU, network to the leader) and at `nats stream info <stream>` (Cluster section: Lag and Active of each replica). A replica that does not catch up can be rebuilt with `nats stream cluster peer-remove <stream> <server>`, after which the meta leader places a new replica that copies the stream from the leader.",
  scope: "stream replica",
  entityType: "stream_replica",
  severity: "warning",
  category: "consistency",
  optimization: false,
  params: [
    {
      name: "p_lag_percent",
      default: 10,
      description:
        "Messages the follower lacks, as a percentage of the leader's last sequence, above which it fires.",
    },
  ],
  detailColumns: [
    { name: "leader", type: "VARCHAR", description: "Stream leader the replica is compared with." },
    { name: "leader_last_seq", type: "BIGINT", description: "Leader's last sequence." },
    { name: "replica_last_seq", type: "BIGINT", description: "This replica's own last sequence." },
    {
      name: "behind_msgs",
      type: "BIGINT",
      description: "Leader's last sequence minus the replica's: messages the replica lacks.",
    },
    {
      name: "behind_percent",
      type: "DOUBLE",
      description: "behind_msgs as a percentage of the leader's last sequence.",
    },
    { name: "threshold_percent", type: "DOUBLE", description: "p_lag_percent in force." },
  ],
  // Followers that answered with their own copy only; a follower whose copy holds no message
  // yet (last_seq 0) is still being initialised. The tables rather than the views: only the
  // few lagging replicas need names.
  sql: `
WITH lagging AS (
  SELECT rs.epoch, rs.stream_replica_pk, ri.stream_pk, ri.server_pk, ls.leader_server_pk,
         ls.last_seq AS leader_last_seq, rs.last_seq AS replica_last_seq
  FROM hx.stream_replica_stats rs
  JOIN hx.stream_replica_ident ri ON ri.stream_replica_pk = rs.stream_replica_pk
  JOIN hx.stream_stats ls ON ls.stream_pk = ri.stream_pk AND ls.epoch = rs.epoch
  WHERE rs.epoch BETWEEN ep_from AND ep_to AND ls.epoch BETWEEN ep_from AND ep_to
    AND rs.answered AND NOT rs.is_leader AND rs.last_seq > 0 AND ls.last_seq > 0
    AND (ls.last_seq - rs.last_seq) * 100.0 > p_lag_percent * ls.last_seq
)
SELECT l.epoch, l.stream_replica_pk AS entity_pk, checks.stream_label(si.domain, si.account, si.name) || '@' || sv.name AS entity_name,
       NULL::VARCHAR AS entity_key, sv.name AS server, 'warning' AS severity,
       ld.name AS leader, l.leader_last_seq, l.replica_last_seq, l.leader_last_seq - l.replica_last_seq AS behind_msgs,
       CAST(100.0 * (l.leader_last_seq - l.replica_last_seq) / l.leader_last_seq AS DOUBLE) AS behind_percent,
       CAST(p_lag_percent AS DOUBLE) AS threshold_percent
FROM lagging l
JOIN hx.stream_ident si ON si.stream_pk = l.stream_pk
JOIN hx.server_ident sv ON sv.server_pk = l.server_pk
LEFT JOIN hx.server_ident ld ON ld.server_pk = l.leader_server_pk`,
};
