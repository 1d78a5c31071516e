/**
 * Streams and consumers of an epoch. Every server's JSZ reply lists each asset it holds a
 * replica of; the sightings are gathered per asset, the leader's is chosen (leader-trust.ts),
 * and only that one gives _opts and _stats. Every asset seen gets an identity, even when its
 * leader did not answer: it exists, it just has no trusted figures this epoch.
 */
import type { FoldContext } from "../fold-context.ts";
import { arr, obj, repliesOf, str, type EpochReplies, type Json } from "../replies.ts";
import { consumerOpts, consumerStats } from "./consumers.ts";
import { pickTrusted, type Sighting } from "./leader-trust.ts";
import { streamOpts, streamStats } from "./streams.ts";

interface StreamReport {
  readonly domain: string;
  readonly account: string;
  readonly name: string;
  readonly detail: Json;
}

interface ConsumerReport {
  readonly stream: string;
  readonly name: string;
  readonly detail: Json;
}

/** Folds the epoch's streams, then their consumers; `serverPks` from foldServers. */
export function foldJetStream(
  ctx: FoldContext,
  replies: EpochReplies,
  serverPks: ReadonlyMap<string, number>,
): void {
  const { streams, consumers } = gatherSightings(ctx, replies);
  const streamPks = new Map<string, number>();
  for (const [key, sightings] of sorted(streams)) {
    const { domain, account, name } = sightings[0]!.report;
    const what = `stream ${domain ? `${domain}/` : ""}${account}/${name}`;
    const pk = ctx.pk("stream", { domain, account, name }, what);
    streamPks.set(key, pk);
    const { trusted, conflict } = pickTrusted(sightings);
    if (conflict) ctx.problem(`${what}: ${conflict}`);
    if (!trusted) continue;
    const opts = streamOpts(trusted.report.detail);
    if (opts) ctx.opts("stream", pk, opts, what);
    const leader = serverPks.get(trusted.server);
    ctx.stats("stream", pk, { leader_server_pk: leader, ...streamStats(trusted.report.detail) }, what);
  }
  for (const [, sightings] of sorted(consumers)) {
    const { stream, name } = sightings[0]!.report;
    const what = `consumer ${name} of stream ${stream.replaceAll("\u0000", "/")}`;
    const pk = ctx.pk("consumer", { stream_pk: streamPks.get(stream), name }, what);
    const { trusted, conflict } = pickTrusted(sightings);
    if (conflict) ctx.problem(`${what}: ${conflict}`);
    if (!trusted) continue;
    const opts = consumerOpts(trusted.report.detail);
    if (opts) ctx.opts("consumer", pk, opts, what);
    const leader = serverPks.get(trusted.server);
    ctx.stats("consumer", pk, { leader_server_pk: leader, ...consumerStats(trusted.report.detail) }, what);
  }
}

function gatherSightings(ctx: FoldContext, replies: EpochReplies) {
  const streams = new Map<string, Sighting<StreamReport>[]>();
  const consumers = new Map<string, Sighting<ConsumerReport>[]>();
  for (const [server, reply] of repliesOf(replies, "jsz")) {
    // A leaf with its own JetStream domain is its own meta group: the domain is part of identity.
    const domain = str(obj(reply.data.config).domain) ?? str(reply.info.domain) ?? "";
    for (const account of arr(reply.data.account_details).map(obj)) {
      const accountName = str(account.name) ?? str(account.id) ?? "";
      for (const detail of arr(account.stream_detail).map(obj)) {
        const name = str(detail.name);
        if (!name) {
          ctx.problem(`jsz from ${server}: a stream of account ${accountName} has no name; skipped`);
          continue;
        }
        const streamKey = [domain, accountName, name].join("\u0000");
        const replicas = positive(obj(detail.config).num_replicas) ?? 1;
        push(streams, streamKey, {
          server,
          leader: str(obj(detail.cluster).leader),
          replicas,
          report: { domain, account: accountName, name, detail },
        });
        for (const consumer of arr(detail.consumer_detail).map(obj)) {
          const consumerName = str(consumer.name);
          if (!consumerName) continue;
          push(consumers, `${streamKey}\u0000\u0000${consumerName}`, {
            server,
            leader: str(obj(consumer.cluster).leader),
            // num_replicas 0 means "as many as the stream".
            replicas: positive(obj(consumer.config).num_replicas) ?? replicas,
            report: { stream: streamKey, name: consumerName, detail: consumer },
          });
        }
      }
    }
  }
  return { streams, consumers };
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** Entries in key order, so new pks are assigned in the same order for the same input. */
function sorted<T>(map: ReadonlyMap<string, T>): [string, T][] {
  return [...map].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function positive(value: unknown): number | undefined {
  const n = typeof value === "bigint" ? Number(value) : value;
  return typeof n === "number" && n > 0 ? n : undefined;
}
