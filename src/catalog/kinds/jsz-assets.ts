/**
 * Every stream and consumer of an epoch's JSZ replies, with each server's sighting of it,
 * gathered once per fold: the stream and consumer fold (jetstream.ts), the replica fold
 * (replicas.ts) and nothing else walk the same replies, so they share one pass, one
 * leader decision per asset and the pks the first of them assigns.
 */
import type { FoldContext } from "../fold-context.ts";
import { byCodeUnits } from "../order.ts";
import { arr, obj, repliesOf, str, type EpochReplies, type Json } from "../replies.ts";
import { pickTrusted, type Sighting, type TrustDecision } from "./leader-trust.ts";

/** One server's JSZ entry for an asset. */
export interface AssetReport {
  readonly detail: Json;
  /** Raft group name, when the server names it (JSZ `raft`, 2.9.15+; ClusterInfo 2.10.4+). */
  readonly group: string | undefined;
}

interface Asset {
  readonly sightings: Sighting<AssetReport>[];
  /** pickTrusted over the sightings, decided once all servers are read. */
  decision: TrustDecision<AssetReport>;
  /** Set by foldJetStream; undefined when its identity cannot be stored (it is left out). */
  pk: number | undefined;
}

export interface StreamAsset extends Asset {
  readonly domain: string;
  /** The account's id: its public key in operator mode, its configured name otherwise. */
  readonly account: string;
  /** The account's name for people: its JWT name in operator mode (not unique, may change). */
  readonly accountName: string;
  readonly name: string;
  /** By name while gathering; read them through `consumers`, in name order. */
  readonly byName: Map<string, ConsumerAsset>;
  consumers: readonly ConsumerAsset[];
}

export interface ConsumerAsset extends Asset {
  readonly stream: StreamAsset;
  readonly name: string;
}

/** The streams and consumers every server of a domain lists for one account. */
export interface AccountAssets {
  readonly streams: Set<StreamAsset>;
  readonly consumers: Set<ConsumerAsset>;
}

export interface JszAssets {
  /**
   * Streams in natural-key order (domain, account, name), each with its consumers in name
   * order, so new pks are assigned in the same order for the same input.
   */
  readonly streams: readonly StreamAsset[];
  /** By accountKey(domain, account id or else name), for the account fold's counts. */
  readonly byAccount: ReadonlyMap<string, AccountAssets>;
}

/**
 * A stream as messages name it: `<domain>/<account>/<name>`, the domain left out when empty.
 * The account is named as findings name it, by its JWT name in operator mode; a message has
 * no pk to tell apart two accounts whose JWTs carry the same name, so the key follows.
 */
export function streamPath(
  stream: Pick<StreamAsset, "domain" | "account" | "name"> & { readonly accountName?: string },
): string {
  const { domain, account, accountName = account, name } = stream;
  const path = `${domain ? `${domain}/` : ""}${accountName}/${name}`;
  return accountName === account ? path : `${path} (account ${account})`;
}

export function accountKey(domain: string, account: string): string {
  return `${domain}\u0000${account}`;
}

const UNDECIDED: TrustDecision<AssetReport> = { trusted: undefined };

export function gatherJszAssets(ctx: FoldContext, replies: EpochReplies): JszAssets {
  const streams = new Map<string, StreamAsset>();
  const byAccount = new Map<string, AccountAssets>();
  for (const [server, reply] of repliesOf(replies, "jsz")) {
    // A leaf with its own JetStream domain is its own meta group: the domain is part of identity.
    const domain = str(obj(reply.data.config).domain) ?? str(reply.info.domain) ?? "";
    for (const accountDetail of arr(reply.data.account_details)) {
      const account = obj(accountDetail);
      // `id` is the account's public key in operator mode, where `name` is its JWT's name: a
      // free label that two accounts may share and a new JWT may change. Streams live in the
      // account, so they are keyed by id, as the account fold keys accounts (configuration
      // mode gives the account's name in both).
      const accountId = str(account.id) ?? str(account.name) ?? "";
      const accountName = str(account.name) ?? accountId;
      let counted: AccountAssets | undefined;
      if (accountId) {
        const key = accountKey(domain, accountId);
        counted = byAccount.get(key);
        if (!counted) byAccount.set(key, (counted = { streams: new Set(), consumers: new Set() }));
      }
      for (const entry of arr(account.stream_detail)) {
        const detail = obj(entry);
        const name = str(detail.name);
        if (!name) {
          const who = accountName === accountId ? accountId : `${accountName} (${accountId})`;
          ctx.problem(`jsz from ${server}: a stream of account ${who} has no name; skipped`);
          continue;
        }
        const key = `${domain}\u0000${accountId}\u0000${name}`;
        let stream = streams.get(key);
        if (!stream) {
          stream = {
            domain,
            account: accountId,
            accountName,
            name,
            byName: new Map(),
            consumers: [],
            sightings: [],
            decision: UNDECIDED,
            pk: undefined,
          };
          streams.set(key, stream);
        }
        counted?.streams.add(stream);
        const replicas = positive(obj(detail.config).num_replicas) ?? 1;
        stream.sightings.push({
          server,
          leader: str(obj(detail.cluster).leader),
          replicas,
          report: { detail, group: raftGroup(detail, detail.stream_raft_group) },
        });
        const consumers = arr(detail.consumer_detail);
        if (consumers.length === 0) continue;
        // 2.9.15+ names consumer groups on the stream; 2.10.4+ also in each consumer's cluster.
        const named = arr(detail.consumer_raft_groups);
        const groups =
          named.length === 0
            ? undefined
            : new Map(named.map((g) => [str(obj(g).name), str(obj(g).raft_group)] as const));
        for (const item of consumers) {
          const consumer = obj(item);
          const consumerName = str(consumer.name);
          if (!consumerName) continue;
          let asset = stream.byName.get(consumerName);
          if (!asset) {
            asset = { stream, name: consumerName, sightings: [], decision: UNDECIDED, pk: undefined };
            stream.byName.set(consumerName, asset);
          }
          counted?.consumers.add(asset);
          asset.sightings.push({
            server,
            leader: str(obj(consumer.cluster).leader),
            // num_replicas 0 means "as many as the stream".
            replicas: positive(obj(consumer.config).num_replicas) ?? replicas,
            report: { detail: consumer, group: raftGroup(consumer, groups?.get(consumerName)) },
          });
        }
      }
    }
  }
  const keys = [...streams.keys()].sort(byCodeUnits);
  const sorted = keys.map((key) => streams.get(key)!);
  for (const stream of sorted) {
    stream.decision = pickTrusted(stream.sightings);
    const consumers = [...stream.byName.values()];
    if (consumers.length > 1) consumers.sort(byName);
    for (const consumer of consumers) consumer.decision = pickTrusted(consumer.sightings);
    stream.consumers = consumers;
  }
  return { streams: sorted, byAccount };
}

function byName(a: ConsumerAsset, b: ConsumerAsset): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

function raftGroup(detail: Json, named: unknown): string | undefined {
  return str(obj(detail.cluster).raft_group) ?? (str(named) || undefined);
}

function positive(value: unknown): number | undefined {
  const n = typeof value === "bigint" ? Number(value) : value;
  return typeof n === "number" && n > 0 ? n : undefined;
}
