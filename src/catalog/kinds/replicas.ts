/**
 * Stream and consumer replicas, and the raft groups behind them (migration 0005). Every
 * server's JSZ reply lists each asset it holds a replica of. Each replica gets a row with
 * that server's OWN copy of the state (a follower's copy is stale as a figure for the
 * asset, but it is exactly what shows a replica out of sync) and with what the trusted
 * leader (leader-trust.ts) says about that peer in `cluster.replicas[]`. Peers the leader
 * lists that did not answer still get a row, from the leader's view only.
 */
import type { FoldContext } from "../fold-context.ts";
import { arr, obj, repliesOf, str, type EpochReplies, type Json } from "../replies.ts";
import type { KindName } from "./entity-kinds.ts";
import { pickTrusted, type Sighting } from "./leader-trust.ts";
import { foldMeta } from "./meta.ts";
import { foldGroup, type ServerPk } from "./raft-groups.ts";
import { indexRaftz, raftzColumns, type RaftzIndex } from "./raftz.ts";

interface Report {
  readonly domain: string;
  readonly account: string;
  readonly stream: string;
  /** Consumer name; undefined for a stream. */
  readonly consumer: string | undefined;
  readonly detail: Json;
  /** Raft group name, when the server names it (JSZ `raft`, 2.9.15+; ClusterInfo 2.10.4+). */
  readonly group: string | undefined;
}

/** Folds replicas, raft groups and the meta group; `serverPks` from foldServers. */
export function foldReplication(
  ctx: FoldContext,
  replies: EpochReplies,
  serverPks: ReadonlyMap<string, number>,
): void {
  const serverPk: ServerPk = (name, cluster) =>
    serverPks.get(name) ?? ctx.pk("server", { name, cluster: str(cluster) }, `server ${name}`);
  const raftz = indexRaftz(replies);
  const assets = gather(replies);
  for (const [, sightings] of [...assets].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const { domain, account, stream, consumer } = sightings[0]!.report;
    const what =
      `${consumer === undefined ? "stream" : `consumer ${consumer} of stream`} ` +
      `${domain ? `${domain}/` : ""}${account}/${stream}`;
    // foldJetStream has already given these their pks; this looks them up.
    const streamPk = ctx.pk("stream", { domain, account, name: stream }, what);
    const consumerPk =
      consumer === undefined ? undefined : ctx.pk("consumer", { stream_pk: streamPk, name: consumer }, what);
    const group = sightings.map((s) => s.report.group).find((g) => g !== undefined);
    const target: Target =
      consumerPk === undefined
        ? { kind: "stream_replica", ident: { stream_pk: streamPk }, own: streamOwn }
        : { kind: "consumer_replica", ident: { consumer_pk: consumerPk }, own: consumerOwn };
    const trusted = pickTrusted(sightings).trusted;
    foldReplicas(ctx, target, sightings, trusted, { serverPk, raftz, group, what });
    if (group === undefined) continue;
    const pk = ctx.pk(
      "raft_group",
      {
        domain,
        name: group,
        kind: consumer === undefined ? "stream" : "consumer",
        account,
        stream_pk: streamPk,
        consumer_pk: consumerPk,
      },
      `raft group ${group} of ${what}`,
    );
    foldGroup(
      ctx,
      pk,
      sightings.length,
      trusted && { server: trusted.server, cluster: trusted.report.detail.cluster },
      serverPk,
      what,
    );
  }
  foldMeta(ctx, replies, serverPk, raftz);
}

interface Target {
  readonly kind: KindName;
  readonly ident: Record<string, number>;
  readonly own: (detail: Json) => Record<string, unknown>;
}

function foldReplicas(
  ctx: FoldContext,
  target: Target,
  sightings: readonly Sighting<Report>[],
  trusted: Sighting<Report> | undefined,
  context: { serverPk: ServerPk; raftz: RaftzIndex; group: string | undefined; what: string },
): void {
  const cluster = trusted ? obj(trusted.report.detail.cluster) : undefined;
  const peers = new Map(arr(cluster?.replicas).map((r) => [str(obj(r).name) ?? "", obj(r)] as const));
  const byServer = new Map(sightings.map((s) => [s.server, s]));
  const names = [...new Set([...byServer.keys(), ...peers.keys()])].filter((n) => n !== "").sort();
  for (const name of names) {
    const sighting = byServer.get(name);
    const what = `${context.what} on ${name}`;
    const groupCluster = cluster?.name ?? obj(sighting?.report.detail.cluster).name;
    const serverPk = context.serverPk(name, groupCluster);
    const pk = ctx.pk(target.kind, { ...target.ident, server_pk: serverPk }, what);
    ctx.stats(
      target.kind,
      pk,
      {
        answered: sighting !== undefined,
        is_leader: sighting !== undefined && (sighting.leader === name || sighting === trusted),
        leader_seen: sighting?.leader,
        ...(sighting ? target.own(sighting.report.detail) : {}),
        ...leaderView(trusted, name, peers.get(name)),
        ...raftzColumns(context.raftz, name, context.group),
      },
      what,
    );
  }
}

/** What the leader says about peer `name` (nats-monitoring.md §0.7); nothing without a leader. */
function leaderView(trusted: Sighting<Report> | undefined, name: string, peer: Json | undefined) {
  if (!trusted) return {};
  if (trusted.server === name) return { current: true, offline: false, lag: 0 };
  if (!peer) return {};
  // `offline` and `lag` are omitempty; `current` stays true for an offline peer.
  return {
    current: peer.current,
    offline: peer.offline ?? false,
    active_ns: peer.active,
    lag: peer.lag ?? 0,
  };
}

function streamOwn(detail: Json): Record<string, unknown> {
  const state = obj(detail.state);
  return {
    messages: state.messages,
    bytes: state.bytes,
    first_seq: state.first_seq,
    last_seq: state.last_seq,
    num_deleted: state.num_deleted ?? 0,
  };
}

function consumerOwn(detail: Json): Record<string, unknown> {
  const delivered = obj(detail.delivered);
  const ackFloor = obj(detail.ack_floor);
  return {
    delivered_stream_seq: delivered.stream_seq,
    delivered_consumer_seq: delivered.consumer_seq,
    ack_floor_stream_seq: ackFloor.stream_seq,
    ack_floor_consumer_seq: ackFloor.consumer_seq,
    num_ack_pending: detail.num_ack_pending,
    num_pending: detail.num_pending,
    num_redelivered: detail.num_redelivered,
    num_waiting: detail.num_waiting,
  };
}

/** Every server's sighting of every stream and consumer, by asset key. */
function gather(replies: EpochReplies): Map<string, Sighting<Report>[]> {
  const assets = new Map<string, Sighting<Report>[]>();
  const push = (key: string, sighting: Sighting<Report>) => {
    const list = assets.get(key);
    if (list) list.push(sighting);
    else assets.set(key, [sighting]);
  };
  for (const [server, reply] of repliesOf(replies, "jsz")) {
    const domain = str(obj(reply.data.config).domain) ?? str(reply.info.domain) ?? "";
    for (const accountDetail of arr(reply.data.account_details).map(obj)) {
      const account = str(accountDetail.name) ?? str(accountDetail.id) ?? "";
      for (const detail of arr(accountDetail.stream_detail).map(obj)) {
        const stream = str(detail.name);
        if (!stream) continue; // reported by foldJetStream
        const replicas = positive(obj(detail.config).num_replicas) ?? 1;
        const base = { domain, account, stream };
        const streamKey = [domain, account, stream].join("\u0000");
        push(streamKey, {
          server,
          leader: str(obj(detail.cluster).leader),
          replicas,
          report: {
            ...base,
            consumer: undefined,
            detail,
            group: raftGroup(detail, detail.stream_raft_group),
          },
        });
        // 2.9.15+ names consumer groups on the stream; 2.10.4+ also in each consumer's cluster.
        const consumerGroups = new Map(
          arr(detail.consumer_raft_groups).map((g) => [str(obj(g).name), str(obj(g).raft_group)] as const),
        );
        for (const consumer of arr(detail.consumer_detail).map(obj)) {
          const name = str(consumer.name);
          if (!name) continue;
          push(`${streamKey}\u0000\u0000${name}`, {
            server,
            leader: str(obj(consumer.cluster).leader),
            replicas: positive(obj(consumer.config).num_replicas) ?? replicas,
            report: {
              ...base,
              consumer: name,
              detail: consumer,
              group: raftGroup(consumer, consumerGroups.get(name)),
            },
          });
        }
      }
    }
  }
  return assets;
}

function raftGroup(detail: Json, named: unknown): string | undefined {
  return str(obj(detail.cluster).raft_group) ?? (str(named) || undefined);
}

function positive(value: unknown): number | undefined {
  const n = typeof value === "bigint" ? Number(value) : value;
  return typeof n === "number" && n > 0 ? n : undefined;
}
