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
  // yet (last_seq 0) is still being initialised, as natscli ignores it.
  sql: `
SELECT r.epoch, r.stream_replica_pk AS entity_pk, r.account || '/' || r.stream || '@' || r.server AS entity_name,
       NULL::VARCHAR AS entity_key, r.server, 'warning' AS severity,
       s.leader, s.last_seq AS leader_last_seq, r.last_seq AS replica_last_seq,
       r.behind_leader_seq AS behind_msgs,
       CAST(100.0 * r.behind_leader_seq / s.last_seq AS DOUBLE) AS behind_percent,
       CAST(p_lag_percent AS DOUBLE) AS threshold_percent
FROM hx.stream_replicas r
JOIN hx.streams s ON s.stream_pk = r.stream_pk AND s.epoch = r.epoch
WHERE r.epoch BETWEEN ep_from AND ep_to AND s.epoch BETWEEN ep_from AND ep_to
  AND r.answered AND NOT r.is_leader AND r.last_seq > 0 AND s.last_seq > 0
  AND r.behind_leader_seq * 100.0 > p_lag_percent * s.last_seq`,
};
