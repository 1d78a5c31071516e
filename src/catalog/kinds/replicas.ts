/**
 * Stream and consumer replicas, and the raft groups behind them (migration 0005). Every
 * server's JSZ reply lists each asset it holds a replica of. Each replica gets a row with
 * that server's OWN copy of the state (a follower's copy is stale as a figure for the
 * asset, but it is exactly what shows a replica out of sync) and with what the trusted
 * leader (leader-trust.ts) says about that peer in `cluster.replicas[]`. Peers the leader
 * lists that did not answer still get a row, from the leader's view only.
 */
import type { FoldContext } from "../fold-context.ts";
import { sortStrings } from "../order.ts";
import { arr, obj, str, type EpochReplies, type Json } from "../replies.ts";
import type { KindName } from "./entity-kinds.ts";
import { streamPath, type AssetReport, type JszAssets } from "./jsz-assets.ts";
import type { Sighting } from "./leader-trust.ts";
import { foldMeta } from "./meta.ts";
import { foldGroup, type ServerPk } from "./raft-groups.ts";
import { indexRaftz, raftzColumns, type RaftzIndex } from "./raftz.ts";

type Report = AssetReport;

/**
 * Folds replicas, raft groups and the meta group; `assets` as foldJetStream left them (with
 * their pks), `serverPks` from foldServers.
 */
export function foldReplication(
  ctx: FoldContext,
  replies: EpochReplies,
  assets: JszAssets,
  serverPks: ReadonlyMap<string, number>,
): void {
  const serverPk: ServerPk = (name, cluster) =>
    serverPks.get(name) ?? ctx.pk("server", { name, cluster: str(cluster) }, `server ${name}`);
  const raftz = indexRaftz(replies);
  const context = { serverPk, raftz, group: undefined as string | undefined, what: "" };
  // A stream, then its consumers: the natural-key order the replica pks were always assigned in.
  for (const stream of assets.streams) {
    // An asset left out of this epoch (foldJetStream) has no replicas or group in it either.
    if (stream.pk === undefined) continue;
    const { domain, account } = stream;
    const streamWhat = streamPath(stream);
    context.what = `stream ${streamWhat}`;
    context.group = groupOf(stream.sightings);
    const trusted = stream.decision.trusted;
    foldReplicas(ctx, STREAM_REPLICA, stream.pk, stream.sightings, trusted, context);
    if (context.group !== undefined) {
      const group = { domain, name: context.group, kind: "stream", account, stream_pk: stream.pk };
      foldRaftGroup(ctx, group, stream.sightings.length, trusted, context);
    }
    for (const consumer of stream.consumers) {
      if (consumer.pk === undefined) continue;
      context.what = `consumer ${consumer.name} of stream ${streamWhat}`;
      context.group = groupOf(consumer.sightings);
      const trustedConsumer = consumer.decision.trusted;
      foldReplicas(ctx, CONSUMER_REPLICA, consumer.pk, consumer.sightings, trustedConsumer, context);
      if (context.group === undefined) continue;
      const group = {
        domain,
        name: context.group,
        kind: "consumer",
        account,
        stream_pk: stream.pk,
        consumer_pk: consumer.pk,
      };
      foldRaftGroup(ctx, group, consumer.sightings.length, trustedConsumer, context);
    }
  }
  foldMeta(ctx, replies, serverPk, raftz);
}

interface Context {
  readonly serverPk: ServerPk;
  readonly raftz: RaftzIndex;
  readonly group: string | undefined;
  readonly what: string;
}

function groupOf(sightings: readonly Sighting<Report>[]): string | undefined {
  for (const s of sightings) if (s.report.group !== undefined) return s.report.group;
  return undefined;
}

function foldRaftGroup(
  ctx: FoldContext,
  ident: Record<string, unknown>,
  reporting: number,
  trusted: Sighting<Report> | undefined,
  context: Context,
): void {
  const pk = ctx.pk("raft_group", ident, `raft group ${context.group} of ${context.what}`);
  if (pk === undefined) return;
  const leader = trusted && { server: trusted.server, cluster: trusted.report.detail.cluster };
  foldGroup(ctx, pk, reporting, leader, context.serverPk, context.what);
}

interface Target {
  readonly kind: KindName;
  readonly ident: (assetPk: number, serverPk: number) => Record<string, number>;
  /**
   * A row with every column this fold may set, all undefined (NULL): filled in place, it
   * keeps the one shape it was allocated with.
   */
  readonly row: () => Record<string, unknown>;
  readonly own: (detail: Json, row: Record<string, unknown>) => void;
  /**
   * The trusted leader's figure each replica is compared with, from the reply its _stats
   * row is written from (jetstream.ts), so the views need not join that row (migration 39).
   */
  readonly leader: (detail: Json, row: Record<string, unknown>) => void;
}

const STREAM_REPLICA: Target = {
  kind: "stream_replica",
  ident: (stream_pk, server_pk) => ({ stream_pk, server_pk }),
  row: () => ({
    answered: undefined,
    is_leader: undefined,
    leader_seen: undefined,
    current: undefined,
    offline: undefined,
    active_ns: undefined,
    lag: undefined,
    raft_state: undefined,
    raft_term: undefined,
    raft_committed: undefined,
    raft_applied: undefined,
    raft_pindex: undefined,
    raft_catching_up: undefined,
    raft_ipq_proposal_len: undefined,
    raft_ipq_entry_len: undefined,
    raft_ipq_resp_len: undefined,
    raft_ipq_apply_len: undefined,
    raft_wal_messages: undefined,
    raft_wal_bytes: undefined,
    messages: undefined,
    bytes: undefined,
    first_seq: undefined,
    last_seq: undefined,
    num_deleted: undefined,
    peers_offline_seen: undefined,
    leader_last_seq: undefined,
  }),
  own: streamOwn,
  leader: (detail, row) => {
    row.leader_last_seq = obj(detail.state).last_seq;
  },
};
const CONSUMER_REPLICA: Target = {
  kind: "consumer_replica",
  ident: (consumer_pk, server_pk) => ({ consumer_pk, server_pk }),
  row: () => ({
    answered: undefined,
    is_leader: undefined,
    leader_seen: undefined,
    current: undefined,
    offline: undefined,
    active_ns: undefined,
    lag: undefined,
    raft_state: undefined,
    raft_term: undefined,
    raft_committed: undefined,
    raft_applied: undefined,
    raft_pindex: undefined,
    raft_catching_up: undefined,
    raft_ipq_proposal_len: undefined,
    raft_ipq_entry_len: undefined,
    raft_ipq_resp_len: undefined,
    raft_ipq_apply_len: undefined,
    raft_wal_messages: undefined,
    raft_wal_bytes: undefined,
    delivered_stream_seq: undefined,
    delivered_consumer_seq: undefined,
    ack_floor_stream_seq: undefined,
    ack_floor_consumer_seq: undefined,
    num_ack_pending: undefined,
    num_pending: undefined,
    num_redelivered: undefined,
    num_waiting: undefined,
    peers_offline_seen: undefined,
    leader_ack_floor_stream_seq: undefined,
  }),
  own: consumerOwn,
  leader: (detail, row) => {
    row.leader_ack_floor_stream_seq = obj(detail.ack_floor).stream_seq;
  },
};

function foldReplicas(
  ctx: FoldContext,
  target: Target,
  assetPk: number,
  sightings: readonly Sighting<Report>[],
  trusted: Sighting<Report> | undefined,
  context: Context,
): void {
  const cluster = trusted ? obj(trusted.report.detail.cluster) : undefined;
  const peers = arr(cluster?.replicas);
  // Servers that answered, and peers the leader names: a handful, kept in a sorted array.
  const names: string[] = [];
  for (const s of sightings) if (s.server !== "") names.push(s.server);
  for (const peer of peers) {
    const name = str(obj(peer).name) ?? "";
    if (name !== "") names.push(name);
  }
  sortStrings(names);
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    if (i > 0 && names[i - 1] === name) continue;
    const sighting = sightingOf(sightings, name);
    const what = `${context.what} on ${name}`;
    const groupCluster = cluster?.name ?? obj(sighting?.report.detail.cluster).name;
    const serverPk = context.serverPk(name, groupCluster);
    if (serverPk === undefined) continue;
    const pk = ctx.pk(target.kind, target.ident(assetPk, serverPk), what);
    const row = target.row();
    if (pk === undefined) continue;
    row.answered = sighting !== undefined;
    row.is_leader = sighting !== undefined && (sighting.leader === name || sighting === trusted);
    row.leader_seen = sighting?.leader;
    if (sighting) target.own(sighting.report.detail, row);
    if (trusted) target.leader(trusted.report.detail, row);
    leaderView(row, trusted, name, peerNamed(peers, name));
    raftzColumns(row, context.raftz, name, context.group);
    ctx.stats(target.kind, pk, row, what);
  }
}

/** `name`'s sighting (the last one, should a server list an asset twice). */
function sightingOf(sightings: readonly Sighting<Report>[], name: string): Sighting<Report> | undefined {
  let found: Sighting<Report> | undefined;
  for (const s of sightings) if (s.server === name) found = s;
  return found;
}

/** The leader's `cluster.replicas[]` entry of `name` (the last one, should a name repeat). */
function peerNamed(peers: readonly unknown[], name: string): Json | undefined {
  let found: Json | undefined;
  for (const peer of peers) {
    const p = obj(peer);
    if ((str(p.name) ?? "") === name) found = p;
  }
  return found;
}

/** What the leader says about peer `name` (nats-monitoring.md §0.7); nothing without a leader. */
function leaderView(
  row: Record<string, unknown>,
  trusted: Sighting<Report> | undefined,
  name: string,
  peer: Json | undefined,
): void {
  if (!trusted) return;
  if (trusted.server === name) {
    row.current = true;
    row.offline = false;
    row.lag = 0;
    return;
  }
  if (!peer) return;
  // `offline` and `lag` are omitempty; `current` stays true for an offline peer.
  row.current = peer.current;
  row.offline = peer.offline ?? false;
  row.active_ns = peer.active;
  row.lag = peer.lag ?? 0;
}

function streamOwn(detail: Json, row: Record<string, unknown>): void {
  const state = obj(detail.state);
  row.messages = state.messages;
  row.bytes = state.bytes;
  row.first_seq = state.first_seq;
  row.last_seq = state.last_seq;
  row.num_deleted = state.num_deleted ?? 0;
  row.peers_offline_seen = peersOfflineSeen(detail);
}

/**
 * Every server lists the group's peers, leader or not (a leaderless one lists itself too):
 * what a surviving replica says of its peers is all there is once quorum is lost.
 */
function peersOfflineSeen(detail: Json): number {
  let offline = 0;
  for (const peer of arr(obj(detail.cluster).replicas)) if (obj(peer).offline === true) offline++;
  return offline;
}

function consumerOwn(detail: Json, row: Record<string, unknown>): void {
  const delivered = obj(detail.delivered);
  const ackFloor = obj(detail.ack_floor);
  row.delivered_stream_seq = delivered.stream_seq;
  row.delivered_consumer_seq = delivered.consumer_seq;
  row.ack_floor_stream_seq = ackFloor.stream_seq;
  row.ack_floor_consumer_seq = ackFloor.consumer_seq;
  row.num_ack_pending = detail.num_ack_pending;
  row.num_pending = detail.num_pending;
  row.num_redelivered = detail.num_redelivered;
  row.num_waiting = detail.num_waiting;
  row.peers_offline_seen = peersOfflineSeen(detail);
}
