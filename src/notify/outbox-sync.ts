import type { NatsConnection } from "@nats-io/nats-core";
import type { FiringFinding } from "../domain/index.ts";
import { transitionPayload, type DeliveredAlertEntry, type OutboxEntry } from "../protocol/index.ts";
import { latestOutboxEntries, outboxKey, publishOutbox } from "./outbox.ts";
import type { KeyedEntry } from "./plan-delivery.ts";

/**
 * What the outbox lacks to say what a system's firing set says (a pure decision): a firing
 * entry for each firing finding the outbox has no entry of, or whose latest entry is a
 * resolve or another severity or start; a resolve for each finding the outbox has firing
 * that is no longer in the set, unless its check is disabled (baseline rule 3: disabling sends
 * no resolve). An entry newer than the firing set's epoch is left alone: it was written
 * for an epoch whose baseline was not saved (a crash between the two), and that epoch's
 * marker comes back to write it again.
 *
 * `delivered` is what the system's receivers are recorded as knowing firing (any endpoint,
 * told by this node or by one that held the catalog role before): such an alert that is not
 * in the firing set and whose latest entry here is not firing also gets a resolve (the node
 * that told the receiver stopped before its resolve went out, or the finding is named under
 * another pk here). One that started after the firing set's epoch is left alone, as newer
 * entries are.
 */
export function outboxRepairs(
  systemId: string,
  epoch: Date,
  firing: ReadonlyMap<string, FiringFinding>,
  outbox: ReadonlyMap<string, OutboxEntry>,
  disabled: readonly string[],
  delivered: ReadonlyMap<string, DeliveredAlertEntry> = new Map(),
): KeyedEntry[] {
  const epochText = epoch.toISOString();
  const newer = (e: OutboxEntry) => Date.parse(e.epoch) > epoch.getTime();
  const repairs: KeyedEntry[] = [];
  const firingKeys = new Set<string>();
  for (const finding of firing.values()) {
    const key = outboxKey(systemId, finding);
    firingKeys.add(key);
    const latest = outbox.get(key);
    const now = transitionPayload({ status: "firing", finding });
    if (
      latest !== undefined &&
      (newer(latest) ||
        (latest.transition.status !== "resolved" &&
          latest.transition.severity === now.severity &&
          latest.transition.starts_at === now.starts_at))
    )
      continue;
    repairs.push({ key, entry: { system: systemId, epoch: epochText, transition: now } });
  }
  for (const [key, latest] of outbox) {
    const t = latest.transition;
    if (firingKeys.has(key) || t.status === "resolved" || newer(latest) || disabled.includes(t.code))
      continue;
    const { prev_severity: _left, ...rest } = t;
    repairs.push({
      key,
      entry: {
        system: systemId,
        epoch: epochText,
        transition: { ...rest, status: "resolved", ends_at: epochText },
      },
    });
  }
  for (const [key, known] of delivered) {
    // A firing entry was dealt with above; a resolve the sender may long have acked is
    // written again, as the receiver is still recorded knowing the alert.
    const latest = outbox.get(key);
    if (latest && (latest.transition.status !== "resolved" || newer(latest))) continue;
    if (firingKeys.has(key) || disabled.includes(known.code)) continue;
    if (known.system !== systemId || Date.parse(known.starts_at) > epoch.getTime()) continue;
    repairs.push({
      key,
      entry: {
        system: systemId,
        epoch: epochText,
        transition: {
          code: known.code,
          entity_type: known.entity_type,
          entity_pk: known.entity_pk,
          entity_name: known.entity_name,
          ...(known.entity_key === undefined ? {} : { entity_key: known.entity_key }),
          status: "resolved",
          severity: known.severity,
          starts_at: known.starts_at,
          ends_at: epochText,
        },
      },
    });
  }
  return repairs;
}

/**
 * Brings one system's outbox in line with its firing set (see outboxRepairs) and resolves
 * once the repairs are stored. Transitions reach the outbox only as they happen, so a finding
 * that was up before any endpoint was configured, or that a seeded or first baseline carried
 * in without a transition, would otherwise never reach an endpoint. Run at start, before the
 * system's first epoch is diffed, and after the epoch that establishes a baseline; writing
 * only what disagrees makes running it again harmless. Returns how many entries it wrote.
 */
export async function syncOutbox(
  nc: NatsConnection,
  nodeId: string,
  systemId: string,
  epoch: Date,
  firing: ReadonlyMap<string, FiringFinding>,
  disabled: readonly string[],
  delivered?: ReadonlyMap<string, DeliveredAlertEntry>,
): Promise<number> {
  const outbox = new Map<string, OutboxEntry>();
  for await (const { key, entry } of latestOutboxEntries(nc, nodeId, systemId)) outbox.set(key, entry);
  const repairs = outboxRepairs(systemId, epoch, firing, outbox, disabled, delivered);
  await publishOutbox(nc, nodeId, repairs, "sync");
  return repairs.length;
}
