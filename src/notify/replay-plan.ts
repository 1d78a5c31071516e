import type { EndpointConfig } from "../config/index.ts";
import type { DeliveryKind, DeliveryLogEntry, PostableAlert } from "../protocol/index.ts";
import { ALERTMANAGER_ENDS_AFTER_MS } from "./bodies.ts";
import { goJson, goTime } from "./go-json.ts";

/** One logged delivery as `deliveries replay` takes it. */
export type ReplayStep =
  | { readonly action: "send"; readonly entry: DeliveryLogEntry; readonly body: string }
  /** The same alerts as the delivery just before it (a failed delivery's next retry round). */
  | { readonly action: "repeat"; readonly entry: DeliveryLogEntry }
  /** Its body was too large to be logged. */
  | { readonly action: "too-large"; readonly entry: DeliveryLogEntry };

export interface ReplayPlan {
  /** One step per logged delivery of the kinds replayed, oldest first. */
  readonly steps: readonly ReplayStep[];
  /** Deliveries of the kinds not replayed, counted by kind. */
  readonly leftOut: ReadonlyMap<DeliveryKind, number>;
}

/**
 * What `deliveries replay` does with one endpoint's logged deliveries: one body per delivery,
 * oldest first (an older log has an entry per attempt, all with the delivery's id). The retry
 * rounds of a failed delivery carry the same alerts one after another, so a body the same as
 * the one just before it is not sent again; the same body later, after others (a finding
 * back at an earlier state), is, or the receiver would be left at the state in between.
 * Bodies are compared without the time stamps a send sets, which differ from round to round.
 */
export function planReplay(
  entries: readonly DeliveryLogEntry[],
  kinds: ReadonlySet<DeliveryKind>,
  type: EndpointConfig["type"],
): ReplayPlan {
  const byDelivery = new Map<string, DeliveryLogEntry>();
  const leftOut = new Map<DeliveryKind, Set<string>>();
  for (const e of entries) {
    if (!kinds.has(e.kind)) leftOut.set(e.kind, (leftOut.get(e.kind) ?? new Set()).add(e.delivery_id));
    else if (!byDelivery.has(e.delivery_id)) byDelivery.set(e.delivery_id, e);
  }
  const steps: ReplayStep[] = [];
  let previous: string | undefined;
  for (const entry of byDelivery.values()) {
    const key = entry.body === undefined ? entry.body_digest : unstampedBody(type, entry);
    if (key === previous) {
      steps.push({ action: "repeat", entry });
      continue;
    }
    previous = key;
    steps.push(
      entry.body === undefined ? { action: "too-large", entry } : { action: "send", entry, body: entry.body },
    );
  }
  return { steps, leftOut: new Map([...leftOut].map(([kind, ids]) => [kind, ids.size])) };
}

/**
 * The body to replay at `now`. A webhook body goes as logged, byte for byte (its signature is
 * recomputed over the same bytes). An Alertmanager list gets its firing alerts' endsAt four
 * minutes after `now`, as a live send gives them: the logged one has passed, or soon will, and
 * Alertmanager would take the alert as resolved. A resolved alert keeps its end.
 */
export function replayedBody(
  type: EndpointConfig["type"],
  entry: DeliveryLogEntry,
  body: string,
  now: Date,
): string {
  const alerts = type === "alertmanager" ? postableList(body) : undefined;
  if (!alerts) return body;
  const sentAt = new Date(entry.time);
  const firingEnd = goTime(new Date(now.getTime() + ALERTMANAGER_ENDS_AFTER_MS));
  return goJson(alerts.map((a) => (stampedBySend(a, sentAt) ? { ...a, endsAt: firingEnd } : a)));
}

/** The logged body without what its send stamped: a firing Alertmanager alert's endsAt. */
function unstampedBody(type: EndpointConfig["type"], entry: DeliveryLogEntry): string {
  const alerts = type === "alertmanager" && entry.body !== undefined ? postableList(entry.body) : undefined;
  if (!alerts) return entry.body_digest;
  const sentAt = new Date(entry.time);
  return goJson(
    alerts.map((a) => {
      if (!stampedBySend(a, sentAt)) return a;
      const { endsAt: _stamp, ...rest } = a;
      return rest;
    }),
  );
}

/**
 * Whether the alert is a firing one, its endsAt set by the send four minutes ahead. A
 * resolved alert ends at its finding's last epoch, before the send; half the four minutes
 * tells them apart with room for the clocks of the node that scraped and the one that sent.
 */
function stampedBySend(alert: PostableAlert, sentAt: Date): boolean {
  return Date.parse(alert.endsAt) - sentAt.getTime() > ALERTMANAGER_ENDS_AFTER_MS / 2;
}

/** The body as a `POST /api/v2/alerts` list, or undefined when it is not one (a webhook body logged before the endpoint changed type). */
function postableList(body: string): PostableAlert[] | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  const isAlert = (a: unknown) =>
    typeof a === "object" && a !== null && typeof (a as { endsAt?: unknown }).endsAt === "string";
  return Array.isArray(value) && value.every(isAlert) ? (value as PostableAlert[]) : undefined;
}
