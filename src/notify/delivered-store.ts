import type { NatsConnection } from "@nats-io/nats-core";
import { Kvm, type KV } from "@nats-io/kv";
import { latestPerKey } from "../bus/index.ts";
import { isSeverity } from "../domain/index.ts";
import { nodeAssets, type DeliveredAlertEntry } from "../protocol/index.ts";

/** KV writes in flight at once. */
const IN_FLIGHT = 256;

/** What one endpoint's receiver was told is firing, kept in the node's delivered-state bucket. */
export interface DeliveredStore {
  /** Every alert the receiver knows as firing, keyed `<system>.<finding key>`. */
  load(): Promise<Map<string, DeliveredAlertEntry>>;
  /** Records a delivery that succeeded. */
  apply(put: ReadonlyMap<string, DeliveredAlertEntry>, remove: ReadonlySet<string>): Promise<void>;
  /** Which receiver the known state is of (receiverDigest), undefined when never recorded. */
  receiver(): Promise<string | undefined>;
  setReceiver(digest: string): Promise<void>;
}

/**
 * The key recording which receiver the state is of. Alert keys are `<system>.<finding key>`,
 * always with a dot, so a single token cannot be one of them (and load() skips it: its
 * value is no alert).
 */
const RECEIVER_KEY = "receiver";

export async function openDeliveredStore(
  nc: NatsConnection,
  nodeId: string,
  endpointId: string,
): Promise<DeliveredStore> {
  const bucket = nodeAssets(nodeId).deliveredBucket;
  const kv: KV = await new Kvm(nc).open(bucket);
  await kv.status();
  const keyOf = (key: string) => `${endpointId}.${key}`;
  return {
    async load() {
      const known = new Map<string, DeliveredAlertEntry>();
      for await (const { key, operation, value } of latestPerKey(nc, bucket, endpointId)) {
        if (operation !== "PUT") continue;
        const entry = parse(value);
        if (entry) known.set(key, entry);
      }
      return known;
    },
    async apply(put, remove) {
      const writes: (() => Promise<unknown>)[] = [
        ...[...put].map(
          ([key, value]) =>
            () =>
              kv.put(keyOf(key), JSON.stringify(value)),
        ),
        ...[...remove].map((key) => () => kv.purge(keyOf(key))),
      ];
      for (let i = 0; i < writes.length; i += IN_FLIGHT) {
        await Promise.all(writes.slice(i, i + IN_FLIGHT).map((w) => w()));
      }
    },
    async receiver() {
      const entry = await kv.get(keyOf(RECEIVER_KEY));
      return entry?.operation === "PUT" ? entry.string() : undefined;
    },
    async setReceiver(digest) {
      await kv.put(keyOf(RECEIVER_KEY), digest);
    },
  };
}

function parse(text: string): DeliveredAlertEntry | undefined {
  try {
    const v = JSON.parse(text) as Partial<DeliveredAlertEntry>;
    if (
      typeof v.system === "string" &&
      typeof v.code === "string" &&
      typeof v.entity_type === "string" &&
      typeof v.entity_pk === "number" &&
      typeof v.entity_name === "string" &&
      isSeverity(v.severity) &&
      typeof v.starts_at === "string"
    ) {
      return v as DeliveredAlertEntry;
    }
  } catch {
    // An unreadable record is left out: the receiver is told again at the next change.
  }
  return undefined;
}
