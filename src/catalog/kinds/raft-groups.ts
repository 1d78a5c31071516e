/**
 * Raft groups (migration 0005): hx.raft_group_opts (membership) and hx.raft_group_stats
 * (health) of one group, from its leader's `cluster` of a stream or consumer, or from the
 * meta leader's `meta_cluster` (same shape: name, leader, replicas[]).
 */
import type { FoldContext } from "../fold-context.ts";
import { arr, obj, str } from "../replies.ts";
import { replicaHealth } from "./streams.ts";

/** Server name → pk (undefined: the server is left out), assigning one to a server only another server's reply names. */
export type ServerPk = (name: string, cluster: unknown) => number | undefined;

/** hx.raft_group_opts and _stats of one group, from its leader's `cluster` (or meta_cluster). */
export function foldGroup(
  ctx: FoldContext,
  pk: number,
  reporting: number,
  leader: { server: string; cluster: unknown } | undefined,
  serverPk: ServerPk,
  what: string,
): void {
  if (!leader) {
    ctx.stats("raft_group", pk, { servers_reporting: reporting }, what);
    return;
  }
  const cluster = obj(leader.cluster);
  const peers = arr(cluster.replicas).map((r) => str(obj(r).name) ?? "");
  const members = [leader.server, ...peers].sort();
  ctx.opts("raft_group", pk, { cluster: cluster.name, members }, what);
  const health = replicaHealth(cluster);
  ctx.stats(
    "raft_group",
    pk,
    {
      leader_server_pk: serverPk(leader.server, cluster.name),
      servers_reporting: reporting,
      peers: members.length,
      peers_offline: health.replicas_offline,
      peers_lagging: health.replicas_lagging,
    },
    what,
  );
}
