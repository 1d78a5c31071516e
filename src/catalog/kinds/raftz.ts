/**
 * RAFTZ (nats-server 2.10.26+, nats-monitoring.md §3.12): `{<account>: {<group>: RaftzGroup}}`
 * per server. Its figures are per (group, server) and land on the row of that server's
 * replica, or on its hx.meta_stats row for the meta group (`_meta_`): state, term and log
 * indexes, the lengths of the node's internal queues (`ipq_*_len`) and the size of its
 * write-ahead log (`wal`). Pure.
 */
import { obj, repliesOf, type EpochReplies, type Json } from "../replies.ts";

/** Server name → raft group name → that server's RaftzGroup. */
export type RaftzIndex = ReadonlyMap<string, ReadonlyMap<string, Json>>;

export function indexRaftz(replies: EpochReplies): RaftzIndex {
  const index = new Map<string, Map<string, Json>>();
  for (const [server, reply] of repliesOf(replies, "raftz")) {
    const groups = new Map<string, Json>();
    // Group names are unique within a meta group, whatever the account.
    for (const account of Object.values(reply.data)) {
      for (const [name, group] of Object.entries(obj(account))) groups.set(name, obj(group));
    }
    index.set(server, groups);
  }
  return index;
}

/**
 * Sets the raft_* columns of `row` from `server`'s member of `group`; leaves them unset when
 * the server has no RAFTZ for it.
 */
export function raftzColumns(
  row: Record<string, unknown>,
  index: RaftzIndex,
  server: string,
  group: string | undefined,
): void {
  const g = group === undefined ? undefined : index.get(server)?.get(group);
  if (!g) return;
  row.raft_state = g.state;
  row.raft_term = g.term;
  row.raft_committed = g.committed;
  row.raft_applied = g.applied;
  row.raft_pindex = g.pindex;
  // omitempty: absent means false.
  row.raft_catching_up = g.catching_up ?? false;
  row.raft_ipq_proposal_len = g.ipq_proposal_len;
  row.raft_ipq_entry_len = g.ipq_entry_len;
  row.raft_ipq_resp_len = g.ipq_resp_len;
  row.raft_ipq_apply_len = g.ipq_apply_len;
  // `wal` is the log's StreamState (messages, bytes, first_seq…); absent when the server
  // could not read its state (wal_error says why).
  const wal = obj(g.wal);
  row.raft_wal_messages = wal.messages;
  row.raft_wal_bytes = wal.bytes;
}
