import type { Check } from "../check.ts";
import { countThreshold, monitoredStreams } from "./stream-monitor-sql.ts";

export const jetstream021: Check = {
  code: "jetstream-021",
  name: "Peer Expect",
  description:
    "The stream's raft group has a different number of peers than its metadata `io.nats.monitor.peer-expect` says it should. Fewer peers means less redundancy than planned (a lost replica was not replaced, or the replica count was lowered); more means a scale-up or a peer move is under way or stuck.",
  remediation:
    "Compare with `nats stream info <stream>` (Cluster Information) and the configured replica count. Restore the replica count with `nats stream edit <stream> --replicas <n>`; replace a removed peer with `nats stream cluster peer-remove <stream> <server>` so a new one is placed. If the change was intended, update the metadata (`io.nats.monitor.peer-expect`); 0 turns the check off.",
  scope: "stream",
  entityType: "stream",
  severity: "critical",
  category: "consistency",
  optimization: false,
  params: [],
  detailColumns: [
    {
      name: "peers",
      type: "INTEGER",
      description: "Peers in the stream's group as the leader reports it, leader included.",
    },
    {
      name: "peer_expect",
      type: "BIGINT",
      description: "Expected peer count from the stream's metadata io.nats.monitor.peer-expect.",
    },
    { name: "replicas", type: "INTEGER", description: "Replica count in the stream's configuration." },
    { name: "peer_names", type: "VARCHAR[]", description: "Servers of those peers, sorted." },
  ],
  minServerVersion: "2.10.0",
  sql: `
WITH st AS (
  SELECT epoch, stream_pk, domain, account, stream, leader, replicas, peer_expect
  FROM (${monitoredStreams({ peer_expect: countThreshold("peer-expect") })})
  WHERE peer_expect IS NOT NULL
),
p AS (
  -- Peers as natscli counts them: the leader plus every peer it lists. The leader's view
  -- (offline) is set exactly for those replicas.
  SELECT r.epoch, ri.stream_pk, CAST(count(*) AS INTEGER) AS peers, list_sort(list(sv.name)) AS peer_names
  FROM hx.stream_replica_stats r
  JOIN hx.stream_replica_ident ri ON ri.stream_replica_pk = r.stream_replica_pk
  JOIN hx.server_ident sv ON sv.server_pk = ri.server_pk
  WHERE r.epoch BETWEEN ep_from AND ep_to AND r.offline IS NOT NULL
  GROUP BY r.epoch, ri.stream_pk
)
SELECT st.epoch, st.stream_pk AS entity_pk, checks.stream_label(st.domain, st.account, st.stream) AS entity_name, NULL::VARCHAR AS entity_key,
       st.leader AS server, 'critical' AS severity,
       coalesce(p.peers, 0) AS peers, st.peer_expect, st.replicas, coalesce(p.peer_names, []) AS peer_names
FROM st
LEFT JOIN p ON p.epoch = st.epoch AND p.stream_pk = st.stream_pk
WHERE coalesce(p.peers, 0) <> st.peer_expect`,
};
