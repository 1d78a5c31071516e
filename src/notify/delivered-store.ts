import type { NatsConnection } from "@nats-io/nats-core";
import { Kvm, type KV } from "@nats-io/kv";
import { JetStreamApiCodes, JetStreamApiError, jetstreamManager } from "@nats-io/jetstream";
import { latestPerKey } from "../bus/index.ts";
import { isSeverity } from "../domain/index.ts";
import type { Logger } from "../lib/index.ts";
import { nodeAssets, systemAssets, type DeliveredAlertEntry } from "../protocol/index.ts";

/** KV writes in flight at once. */
const IN_FLIGHT = 256;

/**
 * What one endpoint's receiver was told is firing, kept per system in the system's
 * delivered-state bucket (`MON_NOTIFIED_<system>`), which every node holding that system's
 * catalog role reads: the receiver's knowledge belongs to the system and the endpoint, not to
 * the node that happened to tell it, so a node taking the role over sends the resolves of
 * what the one before it told.
 */
export interface DeliveredStore {
  /** Every alert the receiver knows as firing, of every system of the store, keyed `<system>.<finding key>`. */
  load(): Promise<Map<string, DeliveredAlertEntry>>;
  /** Records a delivery that succeeded; each key goes to its system's bucket. */
  apply(put: ReadonlyMap<string, DeliveredAlertEntry>, remove: ReadonlySet<string>): Promise<void>;
  /** Which receiver a system's known state is of (receiverDigest), undefined when never recorded. */
  receiver(systemId: string): Promise<string | undefined>;
  setReceiver(systemId: string, digest: string): Promise<void>;
}

/**
 * The key recording which receiver the state is of. Alert keys are `<system>.<finding key>`,
 * always with a dot, so a single token cannot be one of them (and load() skips it: its
 * value is no alert).
 */
const RECEIVER_KEY = "receiver";

/**
 * Opens one endpoint's delivered state in the buckets of `systems` (the systems it sends for
 * on this node; each bucket must exist). A system whose bucket has no receiver recorded for
 * the endpoint first gets what this node's own bucket of earlier releases
 * (`MON_DELIVERED_<node>`) holds for it: carried over once, then purged from there.
 */
export async function openDeliveredStore(
  nc: NatsConnection,
  nodeId: string,
  endpointId: string,
  systems: readonly string[],
  log?: Logger,
): Promise<DeliveredStore> {
  const kvm = new Kvm(nc);
  const buckets = new Map<string, KV>();
  for (const system of systems) buckets.set(system, await kvm.open(systemAssets(system).deliveredBucket));
  const keyOf = (key: string) => `${endpointId}.${key}`;
  const bucketOf = (key: string) => {
    const kv = buckets.get(key.slice(0, key.indexOf(".")));
    if (!kv) throw new Error(`no delivered-state bucket for the system of alert ${key}`);
    return kv;
  };
  const apply = async (
    put: ReadonlyMap<string, DeliveredAlertEntry>,
    remove: ReadonlySet<string>,
  ): Promise<void> => {
    const writes: (() => Promise<unknown>)[] = [
      ...[...put].map(
        ([key, value]) =>
          () =>
            bucketOf(key).put(keyOf(key), JSON.stringify(value)),
      ),
      ...[...remove].map((key) => () => bucketOf(key).purge(keyOf(key))),
    ];
    for (let i = 0; i < writes.length; i += IN_FLIGHT) {
      await Promise.all(writes.slice(i, i + IN_FLIGHT).map((w) => w()));
    }
  };
  const receiver = async (systemId: string) => {
    const entry = await buckets.get(systemId)?.get(keyOf(RECEIVER_KEY));
    return entry?.operation === "PUT" ? entry.string() : undefined;
  };
  const store: DeliveredStore = {
    async load() {
      const known = new Map<string, DeliveredAlertEntry>();
      for (const system of systems) {
        for (const { key, entry } of await readDelivered(nc, system, endpointId)) known.set(key, entry);
      }
      return known;
    },
    apply,
    receiver,
    async setReceiver(systemId, digest) {
      await buckets.get(systemId)?.put(keyOf(RECEIVER_KEY), digest);
    },
  };
  const from = nodeAssets(nodeId).legacyDeliveredBucket;
  for (const system of systems) {
    if ((await receiver(system)) !== undefined) continue;
    try {
      const carried = await carryOver(nc, nodeId, endpointId, system, store);
      if (carried > 0)
        log?.info(
          { system, carried, from },
          "what the endpoint's receiver knows of the system carried over from this node's bucket of an earlier release",
        );
    } catch (err) {
      // Alerts go on from what the system's bucket holds: a receiver is at worst told again.
      log?.warn(
        { err, system, from },
        "what the endpoint's receiver knew by this node's bucket of an earlier release was not carried over (with restricted permissions, grant publish on $KV.MON_DELIVERED_<node_id>.> for the upgrade): the receiver may not get the resolves of alerts sent before it",
      );
    }
  }
  return store;
}

/**
 * Pointed at another receiver (the endpoint's url or type changed, here or on the node that
 * held a system's catalog role before): that receiver was told nothing. Forgetting what the
 * old one knows of the system makes the sender tell the new one every firing alert (the
 * changed filter digest has the outbox read again); the old receiver gets no resolves.
 * Removes them from `known` too, and records `receiver` for every system.
 */
export async function forgetOtherReceivers(
  store: DeliveredStore,
  known: Map<string, DeliveredAlertEntry>,
  systems: readonly string[],
  receiver: string,
  log: Logger,
): Promise<void> {
  for (const system of systems) {
    const before = await store.receiver(system);
    if (before === receiver) continue;
    const old = [...known.keys()].filter((key) => key.startsWith(`${system}.`));
    if (before !== undefined && old.length > 0) {
      await store.apply(new Map(), new Set(old));
      log.info(
        { system, forgotten: old.length },
        "the endpoint's url or type changed: its new receiver is told every alert firing now",
      );
      for (const key of old) known.delete(key);
    }
    await store.setReceiver(system, receiver);
  }
}

/**
 * Every alert of one system its endpoints' receivers know as firing (of one endpoint, or of
 * all), read from the system's bucket; an empty list when the bucket does not exist.
 */
export async function readDelivered(
  nc: NatsConnection,
  systemId: string,
  endpointId?: string,
): Promise<{ endpoint: string; key: string; entry: DeliveredAlertEntry }[]> {
  return (await readDeliveredIfKept(nc, systemId, endpointId)) ?? [];
}

/** As readDelivered, but undefined when the system's bucket does not exist (nothing was ever recorded). */
export async function readDeliveredIfKept(
  nc: NatsConnection,
  systemId: string,
  endpointId?: string,
): Promise<{ endpoint: string; key: string; entry: DeliveredAlertEntry }[] | undefined> {
  const bucket = systemAssets(systemId).deliveredBucket;
  if (!(await bucketExists(nc, bucket))) return undefined;
  const found: { endpoint: string; key: string; entry: DeliveredAlertEntry }[] = [];
  for await (const { key, operation, value } of latestPerKey(nc, bucket, endpointId)) {
    if (operation !== "PUT") continue;
    const entry = parse(value);
    if (!entry) continue;
    if (endpointId !== undefined) found.push({ endpoint: endpointId, key, entry });
    else {
      const dot = key.indexOf(".");
      found.push({ endpoint: key.slice(0, dot), key: key.slice(dot + 1), entry });
    }
  }
  return found;
}

/**
 * Copies what the node's bucket of an earlier release holds of one system for the endpoint
 * into the system's bucket, receiver last (so an interrupted copy is made again at the next
 * start), then purges it there, so it is carried over once. Returns how many alerts it copied.
 */
async function carryOver(
  nc: NatsConnection,
  nodeId: string,
  endpointId: string,
  systemId: string,
  store: DeliveredStore,
): Promise<number> {
  const legacy = nodeAssets(nodeId).legacyDeliveredBucket;
  if (!(await bucketExists(nc, legacy))) return 0;
  const put = new Map<string, DeliveredAlertEntry>();
  for await (const { key, operation, value } of latestPerKey(nc, legacy, `${endpointId}.${systemId}`)) {
    const entry = operation === "PUT" ? parse(value) : undefined;
    if (entry) put.set(`${systemId}.${key}`, entry);
  }
  const kv = await new Kvm(nc).open(legacy);
  const receiverEntry = await kv.get(`${endpointId}.${RECEIVER_KEY}`);
  if (put.size === 0) return 0;
  await store.apply(put, new Set());
  if (receiverEntry?.operation === "PUT") await store.setReceiver(systemId, receiverEntry.string());
  for (const key of put.keys()) await kv.purge(`${endpointId}.${key}`);
  return put.size;
}

async function bucketExists(nc: NatsConnection, bucket: string): Promise<boolean> {
  try {
    await (await jetstreamManager(nc)).streams.info(`KV_${bucket}`);
    return true;
  } catch (err) {
    if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound) return false;
    throw err;
  }
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
