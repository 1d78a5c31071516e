import type { LabelSet, PostableAlert, WebhookAlert, WebhookMessage } from "../protocol/index.ts";
import {
  alertAnnotations,
  alertLabels,
  generatorUrl,
  type DescribeCheck,
  type PlannedAlert,
} from "./alert-parts.ts";
import { alertFingerprint } from "./fingerprint.ts";
import { GO_ZERO_TIME, goJson, goTime } from "./go-json.ts";

/** How long an Alertmanager keeps a firing alert active without hearing of it again (spec: Limits). */
export const ALERTMANAGER_ENDS_AFTER_MS = 4 * 60_000;

/** What every body needs besides its alerts. */
export interface BodyContext {
  readonly describe: DescribeCheck;
  readonly externalUrl: string | undefined;
  /** Systems the node serves: links open the entity only when it serves one. */
  readonly systemCount: number;
}

/** One request to make: the exact body bytes and what they carry. */
export interface DeliveryRequest {
  readonly body: string;
  readonly alertCount: number;
  readonly systems: readonly string[];
}

/**
 * The requests one delivery makes. A `webhook` endpoint gets one Alertmanager webhook-receiver
 * body per system (`system` is the group label, as the spec puts it in `groupLabels`); an
 * `alertmanager` endpoint gets one `POST /api/v2/alerts` list, firing alerts ending
 * four minutes after `now` unless they are heard of again.
 */
export function deliveryRequests(
  type: "webhook" | "alertmanager",
  receiver: string,
  alerts: readonly PlannedAlert[],
  ctx: BodyContext,
  now: Date,
): DeliveryRequest[] {
  if (alerts.length === 0) return [];
  if (type === "alertmanager") {
    return [
      {
        body: goJson(postableAlerts(alerts, ctx, now)),
        alertCount: alerts.length,
        systems: distinct(alerts.map((a) => a.alert.system)),
      },
    ];
  }
  return distinct(alerts.map((a) => a.alert.system)).map((system) => {
    const group = alerts.filter((a) => a.alert.system === system);
    return {
      body: goJson(webhookMessage(receiver, system, group, ctx)),
      alertCount: group.length,
      systems: [system],
    };
  });
}

/** The webhook-receiver body (version 4) of one system's alerts, keys in Alertmanager's order. */
export function webhookMessage(
  receiver: string,
  system: string,
  alerts: readonly PlannedAlert[],
  ctx: BodyContext,
): WebhookMessage {
  const wire: WebhookAlert[] = alerts.map((p) => {
    const check = ctx.describe(p.alert.code);
    const labels = alertLabels(p.alert, check);
    return {
      status: p.status,
      labels,
      annotations: alertAnnotations(p.alert, check),
      startsAt: goTime(new Date(p.alert.starts_at)),
      endsAt: p.status === "firing" || p.endsAt === undefined ? GO_ZERO_TIME : goTime(p.endsAt),
      generatorURL: generatorUrl(p.alert, ctx.externalUrl, ctx.systemCount),
      fingerprint: alertFingerprint(labels),
    };
  });
  return {
    receiver,
    status: wire.some((a) => a.status === "firing") ? "firing" : "resolved",
    alerts: wire,
    groupLabels: { system },
    commonLabels: common(wire.map((a) => a.labels)),
    commonAnnotations: common(wire.map((a) => a.annotations)),
    externalURL: ctx.externalUrl ?? "",
    version: "4",
    groupKey: `{}:{system=${JSON.stringify(system)}}`,
    truncatedAlerts: 0,
  };
}

/** The `POST /api/v2/alerts` list: firing alerts end four minutes ahead, resolves at their end. */
export function postableAlerts(
  alerts: readonly PlannedAlert[],
  ctx: BodyContext,
  now: Date,
): PostableAlert[] {
  const firingEnd = goTime(new Date(now.getTime() + ALERTMANAGER_ENDS_AFTER_MS));
  return alerts.map((p) => {
    const check = ctx.describe(p.alert.code);
    const link = generatorUrl(p.alert, ctx.externalUrl, ctx.systemCount);
    return {
      labels: alertLabels(p.alert, check),
      annotations: alertAnnotations(p.alert, check),
      startsAt: goTime(new Date(p.alert.starts_at)),
      endsAt: p.status === "firing" || p.endsAt === undefined ? firingEnd : goTime(p.endsAt),
      ...(link === "" ? {} : { generatorURL: link }),
    };
  });
}

/** The pairs every set shares, as Alertmanager computes commonLabels and commonAnnotations. */
function common(sets: readonly LabelSet[]): LabelSet {
  const [first, ...rest] = sets;
  if (!first) return {};
  return Object.fromEntries(Object.entries(first).filter(([k, v]) => rest.every((s) => s[k] === v)));
}

function distinct(values: readonly string[]): string[] {
  return [...new Set(values)];
}
