import type { Check } from "../check.ts";
import { durationThreshold, monitoredStreams } from "./stream-monitor-sql.ts";

export const jetstream023: Check = {
  code: "jetstream-023",
  name: "Peer Seen Critical",
  description:
    "The stream leader last heard from a replica longer ago than the duration in the stream's metadata `io.nats.monitor.peer-seen-critical` (a Go duration such as 30s). A replica the leader cannot reach does not receive new messages and does not count towards quorum; one more failure could stop the stream.",
  remediation:
    "Check that the replica's server is running and that routes between it and the leader are up (`nats server list`, `nats server report jetstream`). Restart or repair the server; a replica that does not come back can be replaced with `nats stream cluster peer-remove <stream> <server>`. To change the threshold, edit the stream's metadata (`io.nats.monitor.peer-seen-critical`); 0 turns the check off.",
  scope: "stream replica",
  entityType: "stream_replica",
  severity: "critical",
  category: "consistency",
  optimization: false,
  params: [],
  detailColumns: [
    {
      name: "active_ns",
      type: "BIGINT",
      description: "Nanoseconds since the leader last heard from the replica.",
    },
    {
      name: "peer_seen_critical",
      type: "VARCHAR",
      description: "Threshold from the stream's metadata io.nats.monitor.peer-seen-critical, as written.",
    },
    { name: "peer_seen_critical_ns", type: "BIGINT", description: "That threshold in nanoseconds." },
    { name: "leader", type: "VARCHAR", description: "Stream leader reporting the replica." },
    { name: "offline", type: "BOOLEAN", description: "Whether the leader reports the replica offline." },
  ],
  minServerVersion: "2.10.0",
  sql: `
WITH st AS (
  SELECT epoch, stream_pk, domain, account, stream, leader, peer_seen_critical, peer_seen_critical_ns
  FROM (${monitoredStreams({
    peer_seen_critical: "checks.monitor_text(metadata, 'peer-seen-critical')",
    peer_seen_critical_ns: durationThreshold("peer-seen-critical"),
  })})
  WHERE peer_seen_critical_ns IS NOT NULL
)
SELECT r.epoch, r.stream_replica_pk AS entity_pk, checks.stream_label(st.domain, st.account, st.stream) || '@' || sv.name AS entity_name,
       NULL::VARCHAR AS entity_key, sv.name AS server, 'critical' AS severity,
       r.active_ns, st.peer_seen_critical, st.peer_seen_critical_ns, st.leader, r.offline
FROM hx.stream_replica_stats r
JOIN hx.stream_replica_ident ri ON ri.stream_replica_pk = r.stream_replica_pk
JOIN st ON st.epoch = r.epoch AND st.stream_pk = ri.stream_pk
JOIN hx.server_ident sv ON sv.server_pk = ri.server_pk
WHERE r.epoch BETWEEN ep_from AND ep_to
  -- natscli counts a peer as inactive only strictly beyond the threshold.
  AND NOT r.is_leader AND r.active_ns > st.peer_seen_critical_ns`,
};
