/**
 * SQL pieces of the opt-sys raft checks. A raft node is one server's member of a raft group:
 * the entity is the group (hx.raft_group_ident) and the key the server. RAFTZ (2.10.26+)
 * figures sit on the row of that server's stream or consumer replica, or on its meta_stats
 * row for the meta group; the group a replica row belongs to at an epoch is the one with a
 * hx.raft_group_stats row then (a stream created again gets a new group).
 */

/**
 * A CTE `nodes`: (epoch, raft_group_pk, server_pk, raft_state, raft_committed, raft_applied,
 * raft_catching_up, then the internal queue lengths raft_ipq_proposal_len, _entry_len,
 * _resp_len, _apply_len and the WAL size raft_wal_messages, raft_wal_bytes) for each node
 * with RAFTZ figures in [ep_from, ep_to].
 */
export const RAFT_NODES_CTE = `nodes AS (
  SELECT r.epoch, g.raft_group_pk, i.server_pk, r.raft_state, r.raft_committed, r.raft_applied, r.raft_catching_up,
         r.raft_ipq_proposal_len, r.raft_ipq_entry_len, r.raft_ipq_resp_len, r.raft_ipq_apply_len,
         r.raft_wal_messages, r.raft_wal_bytes
  FROM hx.stream_replica_stats r
  JOIN hx.stream_replica_ident i ON i.stream_replica_pk = r.stream_replica_pk
  JOIN hx.raft_group_ident g ON g.kind = 'stream' AND g.stream_pk = i.stream_pk
  JOIN hx.raft_group_stats gs ON gs.raft_group_pk = g.raft_group_pk AND gs.epoch = r.epoch
  WHERE r.epoch BETWEEN ep_from AND ep_to AND gs.epoch BETWEEN ep_from AND ep_to AND r.raft_state IS NOT NULL
  UNION ALL
  SELECT r.epoch, g.raft_group_pk, i.server_pk, r.raft_state, r.raft_committed, r.raft_applied, r.raft_catching_up,
         r.raft_ipq_proposal_len, r.raft_ipq_entry_len, r.raft_ipq_resp_len, r.raft_ipq_apply_len,
         r.raft_wal_messages, r.raft_wal_bytes
  FROM hx.consumer_replica_stats r
  JOIN hx.consumer_replica_ident i ON i.consumer_replica_pk = r.consumer_replica_pk
  JOIN hx.raft_group_ident g ON g.kind = 'consumer' AND g.consumer_pk = i.consumer_pk
  JOIN hx.raft_group_stats gs ON gs.raft_group_pk = g.raft_group_pk AND gs.epoch = r.epoch
  WHERE r.epoch BETWEEN ep_from AND ep_to AND gs.epoch BETWEEN ep_from AND ep_to AND r.raft_state IS NOT NULL
  UNION ALL
  SELECT m.epoch, g.raft_group_pk, m.server_pk, m.raft_state, m.raft_committed, m.raft_applied, m.raft_catching_up,
         m.raft_ipq_proposal_len, m.raft_ipq_entry_len, m.raft_ipq_resp_len, m.raft_ipq_apply_len,
         m.raft_wal_messages, m.raft_wal_bytes
  FROM hx.meta_stats m
  JOIN hx.meta_ident mi ON mi.meta_pk = m.meta_pk
  JOIN hx.raft_group_ident g ON g.kind = 'meta' AND g.domain = mi.domain
  WHERE m.epoch BETWEEN ep_from AND ep_to AND m.raft_state IS NOT NULL
)`;

/**
 * What group `g` (hx.raft_group_ident) replicates, as `[<domain>/]<account>/<stream>[/<consumer>]` or
 * `meta group[ of domain <d>]`; needs the joins of {@link ASSET_JOINS}.
 */
export const ASSET = `CASE g.kind
  WHEN 'meta' THEN 'meta group' || CASE WHEN g.domain <> '' THEN ' of domain ' || g.domain ELSE '' END
  WHEN 'consumer' THEN checks.consumer_label(si.domain, si.account, si.name, ci.name)
  ELSE checks.stream_label(si.domain, si.account, si.name) END`;

/** Joins naming group `g`'s stream `si` and consumer `ci`, when it has them. */
export const ASSET_JOINS = `LEFT JOIN hx.stream_ident si ON si.stream_pk = g.stream_pk
LEFT JOIN hx.consumer_ident ci ON ci.consumer_pk = g.consumer_pk`;

/** The detail column naming what the group replicates. */
export const ASSET_COLUMN = {
  name: "asset",
  type: "VARCHAR",
  description:
    "What the group replicates: [<domain>/]<account>/<stream>, [<domain>/]<account>/<stream>/<consumer>, or the meta group.",
} as const;
