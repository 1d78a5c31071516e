import type { Check } from "../check.ts";
import { countThreshold, monitoredStreams } from "./stream-monitor-sql.ts";

export const jetstream022: Check = {
  code: "jetstream-022",
  name: "Peer Lag Critical",
  description:
    "The stream leader reports a replica more raft entries behind than the threshold in the stream's metadata `io.nats.monitor.peer-lag-critical`. A lagging replica does not hold the latest messages: if it became leader, or if the other replicas failed, those messages would be unavailable, and a replica that keeps falling behind slows quorum down.",
  remediation:
    "Check the replica's server: CPU, disk latency and free space, and its route to the leader (`nats server report jetstream`, `nats server list`). See the replica with `nats stream info <stream>` (Cluster Information). A replica that never catches up can be rebuilt with `nats stream cluster peer-remove <stream> <server>`. To change the threshold, edit the stream's metadata (`io.nats.monitor.peer-lag-critical`); 0 turns the check off.",
  scope: "stream replica",
  entityType: "stream_replica",
  severity: "critical",
  category: "consistency",
  optimization: false,
  params: [],
  detailColumns: [
    {
      name: "lag",
      type: "BIGINT",
      description: "Raft entries the replica is behind, as the leader reports it.",
    },
    {
      name: "peer_lag_critical",
      type: "BIGINT",
      description: "Threshold from the stream's metadata io.nats.monitor.peer-lag-critical, entries.",
    },
    { name: "leader", type: "VARCHAR", description: "Stream leader reporting the lag." },
    { name: "current", type: "BOOLEAN", description: "Whether the leader reports the replica current." },
    { name: "offline", type: "BOOLEAN", description: "Whether the leader reports the replica offline." },
  ],
  minServerVersion: "2.10.0",
  sql: `
WITH st AS (
  SELECT epoch, stream_pk, domain, account, stream, leader, peer_lag_critical
  FROM (${monitoredStreams({ peer_lag_critical: countThreshold("peer-lag-critical") })})
  WHERE peer_lag_critical IS NOT NULL
)
SELECT r.epoch, r.stream_replica_pk AS entity_pk, checks.stream_label(st.domain, st.account, st.stream) || '@' || sv.name AS entity_name,
       NULL::VARCHAR AS entity_key, sv.name AS server, 'critical' AS severity,
       r.lag, st.peer_lag_critical, st.leader, r.current, r.offline
FROM hx.stream_replica_stats r
JOIN hx.stream_replica_ident ri ON ri.stream_replica_pk = r.stream_replica_pk
JOIN st ON st.epoch = r.epoch AND st.stream_pk = ri.stream_pk
JOIN hx.server_ident sv ON sv.server_pk = ri.server_pk
WHERE r.epoch BETWEEN ep_from AND ep_to
  -- natscli counts a peer as lagged only strictly above the threshold.
  AND NOT r.is_leader AND r.lag > st.peer_lag_critical`,
};
