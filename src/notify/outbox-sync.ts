import type { NatsConnection } from "@nats-io/nats-core";
import type { FiringFinding } from "../domain/index.ts";
import { transitionPayload, type OutboxEntry } from "../protocol/index.ts";
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
 */
export function outboxRepairs(
  systemId: string,
  epoch: Date,
  firing: ReadonlyMap<string, FiringFinding>,
  outbox: ReadonlyMap<string, OutboxEntry>,
  disabled: readonly string[],
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
): Promise<number> {
  const outbox = new Map<string, OutboxEntry>();
  for await (const { key, entry } of latestOutboxEntries(nc, nodeId, systemId)) outbox.set(key, entry);
  const repairs = outboxRepairs(systemId, epoch, firing, outbox, disabled);
  await publishOutbox(nc, nodeId, repairs, "sync");
  return repairs.length;
}
