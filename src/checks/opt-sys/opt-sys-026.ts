import type { Check } from "../check.ts";

/**
 * Peers are the group's leader plus the peers its `cluster.replicas` lists (hx.raft_groups);
 * only 2.9.15+ names stream and consumer groups (JSZ `raft`), so older servers have no group
 * rows. Expected is the stream's replicas, or the consumer's (0: as many as its stream's),
 * from the configuration in force at the latest epoch in the window with a leader.
 */
export const optSys026: Check = {
  code: "opt-sys-026",
  name: "Raft Group Peer Count Mismatch",
  description:
    "A stream's or consumer's raft group has more peers than its replica setting asks for. A peer left over from a scale-down, a peer replacement or a move that did not finish still takes part in elections and quorum: writes wait for more servers than intended, and a quorum computed for the configured size can be lost while the extra peer is down.",
  remediation:
    "Look at the group: `nats stream info <stream>` (or `nats consumer info <stream> <consumer>`), Cluster section, lists the leader and replicas. Remove the surplus peer with `nats stream cluster peer-remove <stream> <server>`, or set the replicas again (`nats stream edit <stream> --replicas=N`) so the meta leader reconciles the group. A move in progress (placement change) finishes on its own; check the meta leader's log if it does not.",
  scope: "raft group",
  entityType: "raft_group",
  severity: "warning",
  category: "consistency",
  optimization: true,
  lookbackSeconds: 3600,
  params: [],
  detailColumns: [
    { name: "raft_group", type: "VARCHAR", description: "Raft group name." },
    { name: "kind", type: "VARCHAR", description: "What the group replicates: stream or consumer." },
    {
      name: "peers",
      type: "INTEGER",
      description: "Peers of the group: the leader and the replicas it lists.",
    },
    { name: "expected_peers", type: "INTEGER", description: "Replicas the configuration asks for." },
    { name: "members", type: "VARCHAR[]", description: "Servers of the group, sorted." },
  ],
  minServerVersion: "2.9.15",
  sql: `
WITH latest AS (
  SELECT g.raft_group_pk, max(g.epoch) AS epoch
  FROM hx.raft_group_stats g
  WHERE g.epoch BETWEEN ep_from AND ep_to AND g.peers IS NOT NULL
  GROUP BY g.raft_group_pk
),
groups AS (
  SELECT g.epoch, g.raft_group_pk, g.leader_server_pk, g.peers, i.name, i.kind, i.stream_pk, i.consumer_pk, m.members
  FROM latest l
  JOIN hx.raft_group_stats g ON g.raft_group_pk = l.raft_group_pk AND g.epoch = l.epoch
  JOIN hx.raft_group_ident i ON i.raft_group_pk = g.raft_group_pk
  ASOF JOIN hx.raft_group_opts m ON m.raft_group_pk = g.raft_group_pk AND g.epoch >= m.epoch
  WHERE g.epoch BETWEEN ep_from AND ep_to AND i.kind IN ('stream', 'consumer')
),
expected AS (
  SELECT g.*, CASE WHEN g.kind = 'consumer' AND co.replicas > 0 THEN co.replicas ELSE so.replicas END AS expected_peers
  FROM groups g
  ASOF JOIN hx.stream_opts so ON so.stream_pk = g.stream_pk AND g.epoch >= so.epoch
  ASOF LEFT JOIN hx.consumer_opts co ON co.consumer_pk = g.consumer_pk AND g.epoch >= co.epoch
)
SELECT e.epoch, e.raft_group_pk AS entity_pk,
       checks.stream_label(si.domain, si.account, si.name) || coalesce('/' || ci.name, '') || ' (' || e.name || ')' AS entity_name,
       NULL::VARCHAR AS entity_key, sv.name AS server, 'warning' AS severity,
       e.name AS raft_group, e.kind, e.peers, e.expected_peers, e.members
FROM expected e
JOIN hx.stream_ident si ON si.stream_pk = e.stream_pk
LEFT JOIN hx.consumer_ident ci ON ci.consumer_pk = e.consumer_pk
LEFT JOIN hx.server_ident sv ON sv.server_pk = e.leader_server_pk
WHERE e.peers > e.expected_peers`,
};
