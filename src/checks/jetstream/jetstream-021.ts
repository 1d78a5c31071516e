import type { Check } from "../check.ts";
import { MONITORED_STREAMS, countThreshold } from "./stream-monitor-sql.ts";

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
  SELECT epoch, stream_pk, account, stream, leader, replicas, ${countThreshold("peer-expect")} AS peer_expect
  FROM (${MONITORED_STREAMS})
),
p AS (
  -- Peers as natscli counts them: the leader plus every peer it lists. The leader's view
  -- (offline) is set exactly for those replicas.
  SELECT st.epoch, st.stream_pk, st.account, st.stream, st.leader, st.replicas, st.peer_expect,
         CAST(count(r.server) AS INTEGER) AS peers, coalesce(list(r.server ORDER BY r.server) FILTER (WHERE r.server IS NOT NULL), []) AS peer_names
  FROM st
  LEFT JOIN hx.stream_replicas r
    ON r.epoch = st.epoch AND r.stream_pk = st.stream_pk AND r.offline IS NOT NULL
   AND r.epoch BETWEEN ep_from AND ep_to
  WHERE st.peer_expect IS NOT NULL
  GROUP BY ALL
)
SELECT epoch, stream_pk AS entity_pk, account || '/' || stream AS entity_name, NULL::VARCHAR AS entity_key,
       leader AS server, 'critical' AS severity,
       peers, peer_expect, replicas, peer_names
FROM p
WHERE peers <> peer_expect`,
};
