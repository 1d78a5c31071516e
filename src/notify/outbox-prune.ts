import type { NatsConnection } from "@nats-io/nats-core";
import { JetStreamApiCodes, JetStreamApiError, jetstreamManager } from "@nats-io/jetstream";
import { nodeAssets } from "../protocol/index.ts";
import { latestOutboxEntries } from "./outbox.ts";
import { readDelivered } from "./delivered-store.ts";

/** Deletes in flight at once (each is one JetStream API request). */
const IN_FLIGHT = 64;
/** API error codes of a message that is not there (any more). */
const GONE: readonly number[] = [JetStreamApiCodes.NoMessageFound, 10043, 10057];
/** Prefix of the endpoints' durable consumers on the outbox (`notify_<endpoint id>`). */
const CONSUMER_PREFIX = nodeAssets("x").endpointConsumer("x").slice(0, -1);

/** What one pruning round did. */
export interface PruneResult {
  /** Resolved entries deleted. */
  readonly deleted: number;
  /** Resolved entries kept because an endpoint has not read past them yet or its receiver still knows the finding. */
  readonly held: number;
}

/**
 * The outbox keeps each finding's latest entry, so without pruning it holds one entry for
 * every finding ever seen: a system whose connections or consumers come and go leaves a
 * resolved entry behind for each, for ever, and every start reads them all. A resolved
 * entry is deleted once it is older than `keepResolvedMs`, every endpoint's consumer has
 * read and acknowledged it (its sequence is at or below every consumer's ack floor), and no
 * endpoint's receiver is still known to have the finding firing (the delivered state). What
 * it said is then known everywhere: an endpoint added later starts from what is firing, and
 * a finding that fires again is written anew. Firing entries are never pruned.
 */
export async function pruneOutbox(
  nc: NatsConnection,
  nodeId: string,
  options: {
    keepResolvedMs: number;
    /** The systems of the outbox: their delivered state says what receivers still know. */
    systems: readonly string[];
    now?: Date;
  },
): Promise<PruneResult> {
  const assets = nodeAssets(nodeId);
  const jsm = await jetstreamManager(nc);
  let floor: number | undefined;
  for await (const info of jsm.consumers.list(assets.outboxStream)) {
    if (!info.name.startsWith(CONSUMER_PREFIX)) continue;
    floor = Math.min(floor ?? Infinity, info.ack_floor.stream_seq);
  }
  // No endpoint reads the outbox: none has read anything, so nothing is known everywhere.
  if (floor === undefined) return { deleted: 0, held: 0 };
  const known = new Set<string>();
  for (const system of options.systems) {
    for (const { key } of await readDelivered(nc, system)) known.add(key);
  }
  const before = (options.now ?? new Date()).getTime() - options.keepResolvedMs;
  const prunable: number[] = [];
  let held = 0;
  for await (const { key, entry, seq } of latestOutboxEntries(nc, nodeId)) {
    if (entry.transition.status !== "resolved" || Date.parse(entry.epoch) > before) continue;
    if (seq > floor || known.has(key)) held += 1;
    else prunable.push(seq);
  }
  let deleted = 0;
  for (let i = 0; i < prunable.length; i += IN_FLIGHT) {
    const done = await Promise.all(
      prunable.slice(i, i + IN_FLIGHT).map((seq) =>
        jsm.streams.deleteMessage(assets.outboxStream, seq, false).catch((err: unknown) => {
          // Gone meanwhile: a newer entry of the finding replaced it (one message per
          // subject), or another round deleted it. nats-server 2.9 answers "no message found"
          // (10057) or "sequence <n> not found" (10043); 10037 is the same in other versions.
          if (err instanceof JetStreamApiError && GONE.includes(err.code)) return false;
          throw err;
        }),
      ),
    );
    deleted += done.filter(Boolean).length;
  }
  return { deleted, held };
}

/**
 * Deletes the outbox consumers of endpoints that are not configured or are disabled (`keep`
 * holds the endpoint ids of the enabled ones): such a consumer reads nothing, and would hold
 * its ack floor, and so pruning, for ever. Nothing is lost with it: what the endpoint's
 * receiver was told stays in the delivered state, which keeps those findings' resolves from
 * being pruned, and a consumer made again reads every finding's latest state. Returns the
 * names deleted.
 */
export async function removeStaleConsumers(
  nc: NatsConnection,
  nodeId: string,
  keep: readonly string[],
): Promise<string[]> {
  const assets = nodeAssets(nodeId);
  const wanted = new Set(keep.map((id) => assets.endpointConsumer(id)));
  const jsm = await jetstreamManager(nc);
  const stale: string[] = [];
  for await (const info of jsm.consumers.list(assets.outboxStream)) {
    if (info.name.startsWith(CONSUMER_PREFIX) && !wanted.has(info.name)) stale.push(info.name);
  }
  for (const name of stale) await jsm.consumers.delete(assets.outboxStream, name);
  return stale;
}
