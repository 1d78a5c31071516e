/**
 * RAFTZ (nats-server 2.10.26+, nats-monitoring.md §3.12): `{<account>: {<group>: RaftzGroup}}`
 * per server. Its figures are per (group, server) and land on the row of that server's
 * replica, or on its hx.meta_stats row for the meta group (`_meta_`). Pure.
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

/** The raft_* columns of `server`'s member of `group`; empty when it has no RAFTZ for it. */
export function raftzColumns(
  index: RaftzIndex,
  server: string,
  group: string | undefined,
): Record<string, unknown> {
  const g = group === undefined ? undefined : index.get(server)?.get(group);
  if (!g) return {};
  return {
    raft_state: g.state,
    raft_term: g.term,
    raft_committed: g.committed,
    raft_applied: g.applied,
    raft_pindex: g.pindex,
    // omitempty: absent means false.
    raft_catching_up: g.catching_up ?? false,
  };
}
