import type { NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import { Kvm, type KV } from "@nats-io/kv";
import { findingId, isSeverity, parseEpoch, type FiringFinding } from "../domain/index.ts";
import { systemAssets, type FindingBaselineEntry, type FindingBaselineEpoch } from "../protocol/index.ts";
import type { Logger } from "../lib/index.ts";
import { latestPerKey } from "../bus/index.ts";
import type { BaselineChanges } from "./baseline-changes.ts";
import { baselineKey, EPOCH_KEY } from "./baseline-key.ts";

/** The stored baseline as loaded at start. */
export interface StoredBaseline {
  /** False for a bucket no baseline was ever saved to (empty, or holding only delete markers). */
  readonly saved: boolean;
  /** The epoch the stored baseline reflects, when the bucket says. */
  readonly epoch: Date | undefined;
  /** Firing findings keyed by {@link findingId}. */
  readonly findings: Map<string, FiringFinding>;
}

/** A system's findings baseline in its KV bucket. */
export interface FindingsBaselineStore {
  readonly bucket: string;
  /** Reads every firing finding; delete markers left by earlier resolves are purged on the way. */
  load(): Promise<StoredBaseline>;
  /** Writes only what changed (put new or changed entries, delete gone ones), then the epoch. */
  save(epoch: Date, changes: BaselineChanges): Promise<void>;
}

/** KV writes in flight at once while saving or compacting (each is one JetStream publish). */
const IN_FLIGHT = 256;

/**
 * Binds to the system's findings-baseline bucket. The bucket (streams/findings-baseline.json)
 * must exist: the node ensures it at start, like the scrape stream; this fails when it does not.
 */
export async function openFindingsBaseline(
  nc: NatsConnection,
  systemId: string,
  log: Logger,
): Promise<FindingsBaselineStore> {
  const bucket = systemAssets(systemId).findingsBucket;
  const kv = await new Kvm(nc).open(bucket);
  // Binding checks nothing; asking for the status fails here, not at the first epoch.
  await kv.status();
  const jsm = await jetstreamManager(nc);
  return {
    bucket,
    load: () => load(nc, jsm, bucket, log),
    save: (epoch, changes) => save(kv, epoch, changes),
  };
}

async function load(
  nc: NatsConnection,
  jsm: JetStreamManager,
  bucket: string,
  log: Logger,
): Promise<StoredBaseline> {
  const findings = new Map<string, FiringFinding>();
  const markers: string[] = [];
  let epoch: Date | undefined;
  let saved = false;
  for await (const { key, operation, value } of latestPerKey(nc, bucket)) {
    if (operation !== "PUT") {
      markers.push(key);
      continue;
    }
    saved = true;
    if (key === EPOCH_KEY) {
      epoch = parseEpochValue(value);
      if (epoch === undefined) log.warn({ bucket, key }, "findings baseline epoch is not readable");
      continue;
    }
    const finding = parseEntry(value);
    if (finding === undefined || baselineKey(finding) !== key) {
      log.warn({ bucket, key }, "findings baseline entry is not readable; left out");
      continue;
    }
    findings.set(findingId(finding), finding);
  }
  await purgeMarkers(jsm, bucket, markers);
  return { saved, epoch, findings };
}

/**
 * A delete leaves a marker per key, and finding identities come and go (a connection's pk
 * is never reused), so markers would pile up for ever. Nothing needs them once loaded:
 * purging each marker's subject leaves the bucket holding only firing findings.
 */
async function purgeMarkers(jsm: JetStreamManager, bucket: string, keys: readonly string[]): Promise<void> {
  await inBatches(keys, (key) =>
    jsm.streams.purge(`KV_${bucket}`, { filter: `$KV.${bucket}.${key}`, keep: 0 }),
  );
}

async function save(kv: KV, epoch: Date, changes: BaselineChanges): Promise<void> {
  await inBatches(changes.put, (f) => kv.put(baselineKey(f), JSON.stringify(toEntry(f))));
  await inBatches(changes.remove, (f) => kv.delete(baselineKey(f)));
  // Last, so a baseline written only in part still names the epoch before it.
  const value: FindingBaselineEpoch = { epoch: epoch.toISOString() };
  await kv.put(EPOCH_KEY, JSON.stringify(value));
}

async function inBatches<T>(items: readonly T[], write: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += IN_FLIGHT) {
    await Promise.all(items.slice(i, i + IN_FLIGHT).map(write));
  }
}

function toEntry(f: FiringFinding): FindingBaselineEntry {
  return {
    code: f.code,
    entity_type: f.entityType,
    entity_pk: f.entityPk,
    ...(f.entityKey === undefined ? {} : { entity_key: f.entityKey }),
    entity_name: f.entityName,
    ...(f.server === undefined ? {} : { server: f.server }),
    severity: f.severity,
    starts_at: f.startsAt.toISOString(),
  };
}

function parseEpochValue(text: string): Date | undefined {
  try {
    return parseEpoch((JSON.parse(text) as FindingBaselineEpoch).epoch);
  } catch {
    return undefined;
  }
}

/** The finding of a stored value, or undefined when the value is not one. */
function parseEntry(text: string): FiringFinding | undefined {
  let value: Partial<Record<keyof FindingBaselineEntry, unknown>>;
  try {
    value = JSON.parse(text) as typeof value;
  } catch {
    return undefined;
  }
  const { code, entity_type, entity_pk, entity_key, entity_name, server, severity, starts_at } = value;
  if (
    typeof code !== "string" ||
    typeof entity_type !== "string" ||
    typeof entity_pk !== "number" ||
    !Number.isInteger(entity_pk) ||
    !(entity_key === undefined || typeof entity_key === "string") ||
    typeof entity_name !== "string" ||
    !(server === undefined || typeof server === "string") ||
    !isSeverity(severity) ||
    typeof starts_at !== "string"
  ) {
    return undefined;
  }
  const startsAt = new Date(starts_at);
  if (Number.isNaN(startsAt.getTime())) return undefined;
  return {
    code,
    entityType: entity_type,
    entityPk: entity_pk,
    ...(entity_key === undefined ? {} : { entityKey: entity_key }),
    entityName: entity_name,
    ...(server === undefined ? {} : { server }),
    severity,
    startsAt,
  };
}
