import type { EndpointConfig } from "../config/index.ts";
import { findingKeyTokens, isSeverity } from "../domain/index.ts";
import type { DeliveredAlertEntry, LabelSet } from "../protocol/index.ts";
import type { PlannedAlert } from "./alert-parts.ts";
import { deliveredAlertOf, type KeyedEntry } from "./plan-delivery.ts";

/**
 * The alerts firing now, keyed `<system>.<finding key>`, as the live sender will leave the
 * receiver: each finding's latest outbox entry (the catalog side's latest state of it), and
 * for findings the outbox has no entry of (pruned, or told by a node that held the catalog
 * role before), what the receiver is recorded knowing (`known`).
 */
export function currentAlerts(
  outbox: Iterable<KeyedEntry>,
  known: ReadonlyMap<string, DeliveredAlertEntry>,
): Map<string, DeliveredAlertEntry> {
  const current = new Map(known);
  for (const { key, entry } of outbox) {
    const t = entry.transition;
    if (t.status === "resolved") {
      current.delete(key);
      continue;
    }
    current.set(key, deliveredAlertOf(entry));
  }
  return current;
}

/** One alert as a replayed body left it at the receiver. */
interface ReplayedAlert {
  readonly firing: boolean;
  readonly alert: DeliveredAlertEntry;
}

/**
 * What ends a replay (`deliveries replay`), so the receiver is left at the current state
 * rather than at whatever the replayed bodies said last: the logged deliveries of an outage
 * carry firing alerts of findings that resolved before the outage ended, and their resolves
 * were never logged (a finding that fires and resolves before delivery sends nothing).
 *
 * Given the bodies as replayed, oldest first, and the alerts firing now (currentAlerts, keyed
 * `<system>.<finding key>`): for each finding the replay named, each of its alerts (one per
 * severity: severity is a label) taken at its last mention,
 * - left firing but the finding is not firing now: a resolve, ending at `now`;
 * - the finding firing now, but not left firing at its severity and start: the current alert,
 *   firing; an `alertmanager` endpoint also gets the resolve of another severity left firing,
 *   as a live severity change sends it (planDelivery).
 * Findings the replay did not name are left alone.
 */
export function replayClosing(
  type: EndpointConfig["type"],
  bodies: readonly string[],
  firingNow: ReadonlyMap<string, DeliveredAlertEntry>,
  now: Date,
): PlannedAlert[] {
  // Each alert's last state, by finding and severity (severity is a label: two alerts).
  const last = new Map<string, Map<string, ReplayedAlert>>();
  for (const body of bodies) {
    for (const a of replayedAlerts(body, now)) {
      const key = [a.alert.system, ...findingKeyTokens(findingOf(a.alert))].join(".");
      const bySeverity = last.get(key) ?? new Map<string, ReplayedAlert>();
      bySeverity.set(a.alert.severity, a);
      last.set(key, bySeverity);
    }
  }
  const closing: PlannedAlert[] = [];
  for (const [key, bySeverity] of last) {
    const current = firingNow.get(key);
    const leftFiring = [...bySeverity.values()].filter((a) => a.firing).map((a) => a.alert);
    // Not firing now: every severity left firing is resolved. Firing: another severity left
    // firing is resolved for Alertmanager only, as a live severity change does.
    const stale = leftFiring.filter(
      (a) => current === undefined || (type === "alertmanager" && a.severity !== current.severity),
    );
    for (const alert of stale) closing.push({ status: "resolved", alert, endsAt: now });
    if (current === undefined) continue;
    const told = leftFiring.some(
      (a) => a.severity === current.severity && Date.parse(a.starts_at) === Date.parse(current.starts_at),
    );
    if (!told) closing.push({ status: "firing", alert: current });
  }
  return closing;
}

function findingOf(a: DeliveredAlertEntry) {
  return {
    code: a.code,
    entityType: a.entity_type,
    entityPk: a.entity_pk,
    ...(a.entity_key === undefined ? {} : { entityKey: a.entity_key }),
  };
}

/**
 * The alerts of a body as sent: a webhook message's with their status, or an Alertmanager
 * list's, firing while their endsAt is after `now` (a replay sets it four minutes ahead).
 * Alerts not of natsmon's making (no system or alertname) are left out.
 */
function replayedAlerts(body: string, now: Date): ReplayedAlert[] {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return [];
  }
  const list: unknown = Array.isArray(value) ? value : (value as { alerts?: unknown } | null)?.alerts;
  if (!Array.isArray(list)) return [];
  const found: ReplayedAlert[] = [];
  for (const item of list as Partial<{
    status: string;
    labels: LabelSet;
    annotations: LabelSet;
    startsAt: string;
    endsAt: string;
  }>[]) {
    const labels = item.labels ?? {};
    const { system, alertname, entity_type, severity } = labels;
    if (!system || !alertname || !entity_type || !isSeverity(severity) || !item.startsAt) continue;
    const firing =
      item.status === undefined ? Date.parse(item.endsAt ?? "") > now.getTime() : item.status === "firing";
    found.push({
      firing,
      alert: {
        system,
        code: alertname,
        entity_type,
        entity_pk: Number(labels.entity_pk ?? 0),
        ...(labels.entity_key === undefined ? {} : { entity_key: labels.entity_key }),
        entity_name: item.annotations?.entity_name ?? "",
        severity,
        starts_at: new Date(item.startsAt).toISOString(),
      },
    });
  }
  return found;
}
