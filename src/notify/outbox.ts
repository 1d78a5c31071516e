import type { NatsConnection } from "@nats-io/nats-core";
import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  type JsMsg,
} from "@nats-io/jetstream";
import { findingKeyTokens, type Transition } from "../domain/index.ts";
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
  const js = jetstream(nc);
  const subjects = nodeSubjects(nodeId);
  const epochText = epoch.toISOString();
  for (let i = 0; i < transitions.length; i += IN_FLIGHT) {
    await Promise.all(
      transitions.slice(i, i + IN_FLIGHT).map((t) => {
        const tokens = findingKeyTokens(t.finding);
        const entry: OutboxEntry = { system: systemId, epoch: epochText, transition: transitionPayload(t) };
        return js.publish(subjects.outbox(systemId, tokens), JSON.stringify(entry), {
          msgID: `${systemId}|${epochText}|${tokens.join(".")}`,
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
 * Opens (creating when missing) the endpoint's durable consumer on the node's outbox. A new
 * consumer starts from the latest state of every finding, so an endpoint added later learns
 * of what is firing and never of what already resolved.
 */
export async function readOutbox(
  nc: NatsConnection,
  nodeId: string,
  endpointId: string,
  onBadEntry: (subject: string) => void,
): Promise<OutboxReader> {
  const assets = nodeAssets(nodeId);
  const subjects = nodeSubjects(nodeId);
  const stream = assets.outboxStream;
  const durable = assets.endpointConsumer(endpointId);
  const jsm = await jetstreamManager(nc);
  try {
    await jsm.consumers.info(stream, durable);
  } catch (err) {
    if (!(err instanceof JetStreamApiError && err.code === JetStreamApiCodes.ConsumerNotFound)) throw err;
    await jsm.consumers.add(stream, {
      durable_name: durable,
      description: `natsmon notification endpoint ${endpointId}`,
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
      const entry = parse(m);
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
    entries: entries(),
    stop: async () => {
      messages.stop();
      await messages.closed();
    },
  };
}

function parse(m: JsMsg): OutboxEntry | undefined {
  try {
    const value = m.json<OutboxEntry>();
    const t = value.transition as Partial<OutboxEntry["transition"]> | undefined;
    if (typeof value.system !== "string" || typeof value.epoch !== "string" || !t) return undefined;
    if (typeof t.code !== "string" || typeof t.status !== "string" || typeof t.severity !== "string")
      return undefined;
    return value;
  } catch {
    return undefined;
  }
}
