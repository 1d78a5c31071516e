import type { NatsConnection } from "@nats-io/nats-core";
import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
} from "@nats-io/jetstream";
import { latestPerSubject } from "../bus/index.ts";
import { findingKeyTokens, type Finding, type Transition } from "../domain/index.ts";
import { nodeAssets, nodeSubjects, transitionPayload, type OutboxEntry } from "../protocol/index.ts";
import type { KeyedEntry } from "./plan-delivery.ts";

/** Outbox writes in flight at once (each is one JetStream publish). */
const IN_FLIGHT = 256;
/** A held message says `working` this often, well inside the consumer's ack wait. */
export const OUTBOX_ACK_WAIT_MS = 30_000;

/**
 * Writes an epoch's transitions to the node's outbox, one subject per finding, and resolves
 * once JetStream has stored them all. The message id names the epoch and the finding, so an
 * epoch whose transitions are written again (its marker redelivered) is not stored twice.
 */
export async function writeOutbox(
  nc: NatsConnection,
  nodeId: string,
  systemId: string,
  epoch: Date,
  transitions: readonly Transition[],
): Promise<void> {
  const epochText = epoch.toISOString();
  await publishOutbox(
    nc,
    nodeId,
    transitions.map((t) => ({
      key: outboxKey(systemId, t.finding),
      entry: { system: systemId, epoch: epochText, transition: transitionPayload(t) },
    })),
  );
}

/** The key of a finding's outbox subject (and of what a receiver knows): `<system>.<finding key tokens>`. */
export function outboxKey(
  systemId: string,
  finding: Pick<Finding, "code" | "entityType" | "entityPk" | "entityKey">,
): string {
  return [systemId, ...findingKeyTokens(finding)].join(".");
}

/**
 * Stores entries under their keys' subjects. The message id is the key, the epoch and
 * `source` (set for entries that are not an epoch's own transitions, so neither is taken for a
 * duplicate of the other).
 */
export async function publishOutbox(
  nc: NatsConnection,
  nodeId: string,
  entries: readonly KeyedEntry[],
  source?: "sync",
): Promise<void> {
  const js = jetstream(nc);
  const subjects = nodeSubjects(nodeId);
  for (let i = 0; i < entries.length; i += IN_FLIGHT) {
    await Promise.all(
      entries.slice(i, i + IN_FLIGHT).map(({ key, entry }) => {
        const [system, ...tokens] = key.split(".");
        return js.publish(subjects.outbox(system!, tokens), JSON.stringify(entry), {
          msgID: `${entry.system}|${entry.epoch}|${source === undefined ? "" : `${source}|`}${tokens.join(".")}`,
        });
      }),
    );
  }
}

/** A message an endpoint's sender holds: its entry, and the ack handle of the message. */
export interface HeldEntry extends KeyedEntry {
  readonly seq: number;
  ack(): void;
  working(): void;
  /** Hands the message back for redelivery now (a sender stopping with it unsent). */
  release(): void;
}

/** An endpoint's durable reading of the outbox. JsMsg stays in here. */
export interface OutboxReader {
  readonly entries: AsyncIterable<HeldEntry & { readonly pending: number }>;
  stop(): Promise<void>;
}

/**
 * The latest entry of every finding in the node's outbox (of one system, or all), with its
 * stream sequence, read with one ordered consumer that stops at the last one. Unreadable
 * entries are left out.
 */
export async function* latestOutboxEntries(
  nc: NatsConnection,
  nodeId: string,
  systemId?: string,
): AsyncGenerator<KeyedEntry & { readonly seq: number }> {
  const subjects = nodeSubjects(nodeId);
  const filter = systemId === undefined ? subjects.outboxAll : subjects.outboxOfSystem(systemId);
  for await (const m of latestPerSubject(nc, nodeAssets(nodeId).outboxStream, filter)) {
    const entry = parseEntry(m.string());
    if (entry !== undefined) yield { key: m.subject.slice(subjects.outboxPrefix.length), entry, seq: m.seq };
  }
}

/**
 * Opens (creating when missing) the endpoint's durable consumer on the node's outbox. A new
 * consumer starts from the latest state of every finding, so an endpoint added later learns
 * of what is firing and never of what already resolved. The consumer's description carries
 * `filter`, a digest of what the endpoint wants: one made under another filter (the endpoint's
 * subscriptions, ignore list, systems or the disabled checks changed since) acked for good
 * entries the endpoint now wants, so it is made again and reads every finding's latest state
 * anew; what the receiver already knows is not sent again (the delivered state decides).
 */
export async function readOutbox(
  nc: NatsConnection,
  nodeId: string,
  endpointId: string,
  filter: string,
  onBadEntry: (subject: string) => void,
): Promise<OutboxReader & { readonly made: boolean }> {
  const assets = nodeAssets(nodeId);
  const subjects = nodeSubjects(nodeId);
  const stream = assets.outboxStream;
  const durable = assets.endpointConsumer(endpointId);
  const description = `natsmon notification endpoint ${endpointId} (filter ${filter})`;
  const jsm = await jetstreamManager(nc);
  let made = true;
  try {
    const info = await jsm.consumers.info(stream, durable);
    if (info.config.description === description) made = false;
    else await jsm.consumers.delete(stream, durable);
  } catch (err) {
    if (!(err instanceof JetStreamApiError && err.code === JetStreamApiCodes.ConsumerNotFound)) throw err;
  }
  if (made) {
    await jsm.consumers.add(stream, {
      durable_name: durable,
      description,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.LastPerSubject,
      filter_subject: subjects.outboxAll,
      ack_wait: OUTBOX_ACK_WAIT_MS * 1_000_000,
      max_ack_pending: 20_000,
      max_deliver: -1,
    });
  }
  const consumer = await jetstream(nc).consumers.get(stream, durable);
  const messages = await consumer.consume({ max_messages: 1000 });
  const prefix = subjects.outboxPrefix;
  async function* entries() {
    for await (const m of messages) {
      const entry = parseEntry(m.string());
      if (entry === undefined) {
        onBadEntry(m.subject);
        m.term();
        continue;
      }
      yield {
        key: m.subject.slice(prefix.length),
        entry,
        seq: m.seq,
        pending: m.info.pending,
        ack: () => m.ack(),
        working: () => m.working(),
        release: () => m.nak(),
      };
    }
  }
  return {
    made,
    entries: entries(),
    stop: async () => {
      messages.stop();
      await messages.closed();
    },
  };
}

function parseEntry(text: string): OutboxEntry | undefined {
  try {
    const value = JSON.parse(text) as OutboxEntry;
    const t = value.transition as Partial<OutboxEntry["transition"]> | undefined;
    if (typeof value.system !== "string" || typeof value.epoch !== "string" || !t) return undefined;
    if (typeof t.code !== "string" || typeof t.status !== "string" || typeof t.severity !== "string")
      return undefined;
    return value;
  } catch {
    return undefined;
  }
}
