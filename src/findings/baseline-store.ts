import type { NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import { Kvm, type KV } from "@nats-io/kv";
import { findingId, isSeverity, parseEpoch, type FiringFinding, type Transition } from "../domain/index.ts";
import {
  systemAssets,
  type FindingBaselineEntry,
  type FindingBaselineEpoch,
  type FindingBaselineTransitions,
} from "../protocol/index.ts";
import type { Logger } from "../lib/index.ts";
import { latestPerKey } from "../bus/index.ts";
import type { BaselineChanges, BaselineEntry } from "./baseline-changes.ts";
import { baselineKey, EPOCH_KEY, foreignKey, TRANSITIONS_KEY } from "./baseline-key.ts";

/** The stored baseline as loaded at start. */
export interface StoredBaseline {
  /** False for a bucket no baseline was ever saved to (empty, or holding only delete markers). */
  readonly saved: boolean;
  /** The epoch the stored baseline reflects, when the bucket says. */
  readonly epoch: Date | undefined;
  /** The catalog that wrote the baseline; undefined for one written before catalogs had ids. */
  readonly catalogId: string | undefined;
  /** Firing findings keyed by {@link findingId}, in the entity pks of the catalog that wrote them. */
  readonly findings: Map<string, FiringFinding>;
  /** Findings held under the pks of other catalogs (each names its own), keyed by their KV key. */
  readonly held: Map<string, BaselineEntry>;
  /** The transitions of the last epoch that had any, saved with its baseline. */
  readonly transitions: { readonly epoch: Date; readonly transitions: Transition[] } | undefined;
}

/** What is saved with an epoch's baseline changes besides the entries. */
export interface SaveOptions {
  /** The catalog writing the baseline (its entries name this catalog's pks). */
  readonly catalogId?: string | undefined;
  /** The epoch's transitions, kept so they can be published again; none: the key is left as is. */
  readonly transitions?: readonly Transition[];
}

/** A system's findings baseline in its KV bucket. */
export interface FindingsBaselineStore {
  readonly bucket: string;
  /** Reads every firing finding; delete markers left by earlier resolves are purged on the way. */
  load(): Promise<StoredBaseline>;
  /**
   * Writes the epoch's transitions (when it has any), then only what changed (put new or
   * changed entries, delete gone ones), then the epoch.
   */
  save(epoch: Date, changes: BaselineChanges, options?: SaveOptions): Promise<void>;
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
    save: (epoch, changes, options = {}) => save(nc, kv, log, epoch, changes, options),
  };
}

async function load(
  nc: NatsConnection,
  jsm: JetStreamManager,
  bucket: string,
  log: Logger,
): Promise<StoredBaseline> {
  const findings = new Map<string, FiringFinding>();
  const held = new Map<string, BaselineEntry>();
  const markers: string[] = [];
  let stamp: { epoch: Date; catalogId: string | undefined } | undefined;
  let transitions: StoredBaseline["transitions"];
  let saved = false;
  for await (const { key, operation, value } of latestPerKey(nc, bucket)) {
    if (operation !== "PUT") {
      markers.push(key);
      continue;
    }
    if (key === TRANSITIONS_KEY) {
      transitions = parseTransitions(value);
      if (transitions === undefined)
        log.warn({ bucket, key }, "findings baseline transitions are not readable");
      continue;
    }
    saved = true;
    if (key === EPOCH_KEY) {
      stamp = parseEpochValue(value);
      if (stamp === undefined) log.warn({ bucket, key }, "findings baseline epoch is not readable");
      continue;
    }
    const entry = parseEntry(value);
    if (entry === undefined || keyOf(entry) !== key) {
      log.warn({ bucket, key }, "findings baseline entry is not readable; left out");
      continue;
    }
    if (entry.catalogId === undefined) findings.set(findingId(entry), entry);
    else held.set(key, entry);
  }
  await purgeMarkers(jsm, bucket, markers);
  return { saved, epoch: stamp?.epoch, catalogId: stamp?.catalogId, findings, held, transitions };
}

/** The KV key of an entry: foreignKey for one held under another catalog's pks, else baselineKey. */
export function keyOf(entry: BaselineEntry): string {
  return entry.catalogId === undefined ? baselineKey(entry) : foreignKey(entry.catalogId, entry);
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

async function save(
  nc: NatsConnection,
  kv: KV,
  log: Logger,
  epoch: Date,
  changes: BaselineChanges,
  options: SaveOptions,
): Promise<void> {
  // First, so a node that stops anywhere after it finds them when the marker comes back: a
  // baseline saved in full or in part no longer tells what the epoch changed.
  if (options.transitions !== undefined && options.transitions.length > 0) {
    const value: FindingBaselineTransitions = {
      epoch: epoch.toISOString(),
      transitions: options.transitions.map(toStoredTransition),
    };
    const text = JSON.stringify(value);
    const limit = nc.info?.max_payload ?? Infinity;
    // Headers and subject take some of the payload limit; half of it leaves room enough.
    if (Buffer.byteLength(text) <= limit / 2) await kv.put(TRANSITIONS_KEY, text);
    else
      log.warn(
        {
          epoch,
          transitions: options.transitions.length,
          bytes: Buffer.byteLength(text),
          max_payload: limit,
        },
        "the epoch's transitions are too many to keep with the findings baseline: if the node stops before it has published them, they are not published again",
      );
  }
  await inBatches(changes.put, (f) => kv.put(keyOf(f), JSON.stringify(toEntry(f))));
  await inBatches(changes.remove, (f) => kv.delete(keyOf(f)));
  // Last, so a baseline written only in part still names the epoch before it.
  const value: FindingBaselineEpoch = {
    epoch: epoch.toISOString(),
    ...(options.catalogId === undefined ? {} : { catalog_id: options.catalogId }),
  };
  await kv.put(EPOCH_KEY, JSON.stringify(value));
}

async function inBatches<T>(items: readonly T[], write: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += IN_FLIGHT) {
    await Promise.all(items.slice(i, i + IN_FLIGHT).map(write));
  }
}

function toStoredTransition(t: Transition): FindingBaselineTransitions["transitions"][number] {
  return {
    status: t.status,
    finding: toEntry(t.finding),
    ...(t.status === "resolved" ? { ends_at: t.endsAt.toISOString() } : {}),
    ...(t.status === "changed" ? { prev_severity: t.prevSeverity } : {}),
  };
}

function parseTransitions(text: string): StoredBaseline["transitions"] {
  try {
    const value = JSON.parse(text) as FindingBaselineTransitions;
    const epoch = parseEpoch(value.epoch);
    const transitions: Transition[] = [];
    for (const t of value.transitions) {
      const finding = parseFields(t.finding);
      if (finding === undefined || finding.catalogId !== undefined) return undefined;
      if (t.status === "firing") transitions.push({ status: "firing", finding });
      else if (t.status === "resolved" && typeof t.ends_at === "string") {
        const endsAt = new Date(t.ends_at);
        if (Number.isNaN(endsAt.getTime())) return undefined;
        transitions.push({ status: "resolved", finding, endsAt });
      } else if (t.status === "changed" && isSeverity(t.prev_severity))
        transitions.push({ status: "changed", finding, prevSeverity: t.prev_severity });
      else return undefined;
    }
    return { epoch, transitions };
  } catch {
    return undefined;
  }
}

function toEntry(f: BaselineEntry): FindingBaselineEntry {
  return {
    code: f.code,
    entity_type: f.entityType,
    entity_pk: f.entityPk,
    ...(f.entityKey === undefined ? {} : { entity_key: f.entityKey }),
    entity_name: f.entityName,
    ...(f.server === undefined ? {} : { server: f.server }),
    severity: f.severity,
    starts_at: f.startsAt.toISOString(),
    ...(f.catalogId === undefined ? {} : { catalog_id: f.catalogId }),
  };
}

function parseEpochValue(text: string): { epoch: Date; catalogId: string | undefined } | undefined {
  try {
    const value = JSON.parse(text) as FindingBaselineEpoch;
    const epoch = parseEpoch(value.epoch);
    return { epoch, catalogId: typeof value.catalog_id === "string" ? value.catalog_id : undefined };
  } catch {
    return undefined;
  }
}

/** The finding of a stored value, or undefined when the value is not one. */
function parseEntry(text: string): BaselineEntry | undefined {
  try {
    return parseFields(JSON.parse(text) as Record<string, unknown>);
  } catch {
    return undefined;
  }
}

function parseFields(value: Partial<Record<keyof FindingBaselineEntry, unknown>>): BaselineEntry | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { code, entity_type, entity_pk, entity_key, entity_name, server, severity, starts_at, catalog_id } =
    value;
  if (
    typeof code !== "string" ||
    typeof entity_type !== "string" ||
    typeof entity_pk !== "number" ||
    !Number.isInteger(entity_pk) ||
    !(entity_key === undefined || typeof entity_key === "string") ||
    typeof entity_name !== "string" ||
    !(server === undefined || typeof server === "string") ||
    !isSeverity(severity) ||
    typeof starts_at !== "string" ||
    !(catalog_id === undefined || typeof catalog_id === "string")
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
    ...(catalog_id === undefined ? {} : { catalogId: catalog_id }),
  };
}
