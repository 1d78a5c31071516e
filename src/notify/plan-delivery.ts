import type { DeliveredAlertEntry, OutboxEntry } from "../protocol/index.ts";
import type { PlannedAlert } from "./alert-parts.ts";

/** One outbox entry with the key that names its finding (`<system>.<finding key tokens>`). */
export interface KeyedEntry {
  readonly key: string;
  readonly entry: OutboxEntry;
}

/** What to send for a batch, and how the receiver's known state changes once it is sent. */
export interface DeliveryPlan {
  readonly alerts: PlannedAlert[];
  readonly put: ReadonlyMap<string, DeliveredAlertEntry>;
  readonly remove: ReadonlySet<string>;
}

/**
 * Decides what one endpoint's receiver must be told about a batch of outbox entries, given
 * what it already knows (spec: Finding status, baseline rule 4; Notification deliveries 2):
 * - firing or changed: a firing alert, unless the receiver already knows it at that severity
 *   and start; a severity it knew at another severity is also resolved for `alertmanager`
 *   endpoints (severity is a label there, so the old alert would otherwise stay active);
 * - resolved: a resolve at the severity the receiver knows; nothing if it never knew the
 *   finding (fired and resolved before delivery: never a lone resolve).
 * Only each finding's latest entry in the batch counts (the outbox keeps only the latest state,
 * and a batch may still hold an older one), taken in batch order.
 */
export function planDelivery(
  batch: readonly KeyedEntry[],
  delivered: ReadonlyMap<string, DeliveredAlertEntry>,
  type: "webhook" | "alertmanager",
): DeliveryPlan {
  const alerts: PlannedAlert[] = [];
  const known = new Map<string, DeliveredAlertEntry | undefined>();
  const knownOf = (key: string) => (known.has(key) ? known.get(key) : delivered.get(key));
  const latest = new Map<string, KeyedEntry>();
  for (const e of batch) {
    latest.delete(e.key);
    latest.set(e.key, e);
  }
  for (const { key, entry } of latest.values()) {
    const t = entry.transition;
    const before = knownOf(key);
    if (t.status === "resolved") {
      if (before === undefined) continue;
      alerts.push({ status: "resolved", alert: before, endsAt: new Date(t.ends_at ?? entry.epoch) });
      known.set(key, undefined);
      continue;
    }
    const now = deliveredAlertOf(entry);
    if (before !== undefined && before.severity === now.severity && before.starts_at === now.starts_at)
      continue;
    if (before !== undefined && before.severity !== now.severity && type === "alertmanager") {
      alerts.push({ status: "resolved", alert: before, endsAt: new Date(entry.epoch) });
    }
    alerts.push({ status: "firing", alert: now });
    known.set(key, now);
  }
  const put = new Map<string, DeliveredAlertEntry>();
  const remove = new Set<string>();
  for (const [key, value] of known) {
    if (value === undefined) remove.add(key);
    else put.set(key, value);
  }
  return { alerts, put, remove };
}

/**
 * The alerts an Alertmanager's resend carries (spec: Notification deliveries 3): every alert
 * its receiver knows as firing that the endpoint still sends, except those a pending change
 * (`pending`, planned against the same known state) or a change known to be on its way
 * (`changing`) alters: a resend must not show a resolved finding firing again, or an old
 * severity, ahead of the change that says otherwise.
 */
export function resendAlerts(
  known: ReadonlyMap<string, DeliveredAlertEntry>,
  pending: DeliveryPlan,
  changing: ReadonlySet<string>,
  sends: (system: string, code: string) => boolean,
): PlannedAlert[] {
  const altered = (key: string) => pending.put.has(key) || pending.remove.has(key) || changing.has(key);
  return [...known]
    .filter(([key, a]) => sends(a.system, a.code) && !altered(key))
    .map(([, alert]) => ({ status: "firing", alert }));
}

/** What a receiver knows of a finding once told of the outbox entry's (firing) transition. */
export function deliveredAlertOf(entry: OutboxEntry): DeliveredAlertEntry {
  const t = entry.transition;
  return {
    system: entry.system,
    code: t.code,
    entity_type: t.entity_type,
    entity_pk: t.entity_pk,
    ...(t.entity_key === undefined ? {} : { entity_key: t.entity_key }),
    entity_name: t.entity_name,
    severity: t.severity,
    starts_at: t.starts_at,
  };
}
