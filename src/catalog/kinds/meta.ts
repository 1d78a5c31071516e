/**
 * The JetStream meta group, one per domain (migration 0005): a hx.meta_stats row for every
 * server whose JSZ reports a `meta_cluster`, so that servers naming different leaders, or
 * none, stay visible (nats-monitoring.md §0.4, §8.5). Only the leader's reply carries
 * `meta_cluster.replicas`; from it come the offline and lagging counts and whether quorum,
 * floor(cluster_size / 2) + 1, holds, and (migration 0011) which peers it lists and how it
 * sees each. Every row also carries the server's meta API queue (`pending`, 2.10.21+) and its
 * last meta snapshot (`snapshot`, 2.11.11 / 2.12.2+). The group also gets a hx.raft_group
 * row (`_meta_`). appendMetaGroupStats then judges the group from those rows, after the
 * kinds' rows, in the same transaction (hx.meta_group_stats, migration 0041).
 */
import { TIMESTAMPTZ, type DuckDBConnection, type DuckDBTimestampTZValue } from "@duckdb/node-api";
import type { FoldContext } from "../fold-context.ts";
import { arr, isEmpty, obj, repliesOf, str, type EpochReplies, type Json } from "../replies.ts";
import { raftzColumns, type RaftzIndex } from "./raftz.ts";
import { foldGroup, type ServerPk } from "./raft-groups.ts";
import { replicaHealth } from "./streams.ts";

/** The meta group's raft group name in nats-server. */
export const META_GROUP = "_meta_";

interface MetaView {
  readonly server: string;
  readonly meta: Json;
}

export function foldMeta(
  ctx: FoldContext,
  replies: EpochReplies,
  serverPk: ServerPk,
  raftz: RaftzIndex,
): void {
  const byDomain = new Map<string, MetaView[]>();
  for (const [server, reply] of repliesOf(replies, "jsz")) {
    const meta = obj(reply.data.meta_cluster);
    // A standalone server (a leaf with its own domain) reports no meta_cluster at all.
    if (isEmpty(meta)) continue;
    const domain = str(obj(reply.data.config).domain) ?? str(reply.info.domain) ?? "";
    const views = byDomain.get(domain);
    if (views) views.push({ server, meta });
    else byDomain.set(domain, [{ server, meta }]);
  }
  for (const domain of [...byDomain.keys()].sort()) {
    const views = byDomain.get(domain)!.sort((a, b) => (a.server < b.server ? -1 : 1));
    const what = `meta group${domain ? ` of domain ${domain}` : ""}`;
    const pk = ctx.pk("meta", { domain }, what);
    const leaders = views.filter((v) => str(v.meta.leader) === v.server);
    if (leaders.length > 1) {
      ctx.problem(`${what}: ${leaders.map((v) => v.server).join(", ")} all claim to lead`);
    }
    const leader = leaders[0];
    if (leader) {
      const members = [leader.server, ...arr(leader.meta.replicas).map((r) => str(obj(r).name) ?? "")].sort();
      ctx.opts("meta", pk, { cluster_size: leader.meta.cluster_size, members }, what);
    }
    for (const { server, meta } of views) {
      const isLeader = str(meta.leader) === server;
      const size = typeof meta.cluster_size === "number" ? meta.cluster_size : undefined;
      const quorum = size === undefined ? undefined : Math.floor(size / 2) + 1;
      const health = isLeader ? replicaHealth(meta) : undefined;
      const row: Record<string, unknown> = {
        server_pk: serverPk(server, meta.name),
        cluster: meta.name,
        leader: meta.leader,
        is_leader: isLeader,
        cluster_size: size,
        quorum,
        peers_offline: health?.replicas_offline,
        peers_lagging: health?.replicas_lagging,
        quorum_ok:
          health && size !== undefined && quorum !== undefined
            ? size - health.replicas_offline >= quorum
            : undefined,
      };
      if (isLeader) Object.assign(row, peerColumns(meta));
      const snapshot = obj(meta.snapshot);
      row.pending = meta.pending;
      row.snapshot_pending_entries = snapshot.pending_entries;
      row.snapshot_pending_size = snapshot.pending_size;
      row.snapshot_last_time = snapshot.last_time;
      row.snapshot_last_duration_ns = snapshot.last_duration;
      raftzColumns(row, raftz, server, META_GROUP);
      ctx.stats("meta", pk, row, `${what} as ${server} sees it`);
    }
    const group = ctx.pk("raft_group", { domain, name: META_GROUP, kind: "meta" }, `${what} raft group`);
    const lead = leader && { server: leader.server, cluster: leader.meta };
    if (group !== undefined) foldGroup(ctx, group, views.length, lead, serverPk, what);
  }
}

/**
 * The leader's view of each peer as parallel lists sorted by peer name (the fold writes no
 * STRUCT columns). `offline` is present only when true and `lag` only when non-zero.
 */
function peerColumns(meta: Json): Record<string, unknown[]> {
  const peers = arr(meta.replicas)
    .map(obj)
    .map((r) => ({ name: str(r.name) ?? "", r }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return {
    peer_names: peers.map((p) => p.name),
    peer_offline: peers.map((p) => p.r.offline === true),
    peer_current: peers.map((p) => p.r.current === true),
    peer_active_ns: peers.map((p) => p.r.active ?? null),
    peer_lag: peers.map((p) => p.r.lag ?? 0),
  };
}

/**
 * Each meta group's figures of `epoch`, judged from its servers' hx.meta_stats rows: the
 * leader is the server claiming it, or else the one the others name when that one did not
 * answer (its own view is missing, not contradicting them); the offline and lagging counts
 * and quorum come from the leader's row. Returns the rows written.
 */
export async function appendMetaGroupStats(
  con: DuckDBConnection,
  epoch: DuckDBTimestampTZValue,
): Promise<number> {
  const written = await con.run(
    `INSERT INTO hx.meta_group_stats
WITH views AS (
  SELECT m.*, sv.name AS server,
         min(CASE WHEN m.is_leader THEN sv.name END) OVER w AS claimed,
         mode(m.leader) OVER w AS named,
         list(sv.name) OVER w AS reporting
  FROM hx.meta_stats m JOIN hx.server_ident sv ON sv.server_pk = m.server_pk
  WHERE m.epoch = $1
  WINDOW w AS (PARTITION BY m.meta_pk)
), judged AS (
  SELECT *, coalesce(claimed, CASE WHEN NOT list_contains(reporting, named) THEN named END) AS lead
  FROM views
)
SELECT epoch, meta_pk, any_value(lead) AS leader, any_value(claimed) IS NOT NULL AS leader_reporting,
       count(*) FILTER (WHERE leader IS DISTINCT FROM lead) = 0 AND any_value(lead) IS NOT NULL AS leader_agreed,
       list(DISTINCT leader ORDER BY leader) FILTER (WHERE leader IS NOT NULL) AS leaders_seen,
       coalesce(list(server ORDER BY server) FILTER (WHERE leader IS DISTINCT FROM lead), []) AS servers_disagreeing,
       count(*) FILTER (WHERE is_leader) AS leaders_claiming,
       count(*) AS servers_reporting,
       coalesce(max(cluster_size) FILTER (WHERE is_leader), max(cluster_size)) AS cluster_size,
       max(peers_offline) FILTER (WHERE is_leader) AS peers_offline,
       max(peers_lagging) FILTER (WHERE is_leader) AS peers_lagging,
       CASE WHEN any_value(claimed) IS NOT NULL THEN bool_and(quorum_ok) FILTER (WHERE is_leader)
            WHEN any_value(lead) IS NULL THEN false END AS quorum_ok
FROM judged GROUP BY epoch, meta_pk ORDER BY meta_pk`,
    [epoch],
    [TIMESTAMPTZ],
  );
  return written.rowsChanged;
}
