import type { DeliveredAlertEntry, LabelSet } from "../protocol/index.ts";

/** What the labels and annotations say about a check (checks.info, in short). */
export interface CheckDescription {
  readonly name: string;
  readonly description: string;
  readonly remediation: string;
  readonly scope: string;
  readonly category: string;
}

/** The check of a code, or undefined for a code natsmon does not know (any more). */
export type DescribeCheck = (code: string) => CheckDescription | undefined;

/** The `source` label: a fixed neutral word naming the service (spec: Alert labels). */
export const ALERT_SOURCE = "natsmon";

/** One alert to send: a finding as the receiver will know it, firing or resolved. */
export interface PlannedAlert {
  readonly status: "firing" | "resolved";
  readonly alert: DeliveredAlertEntry;
  /** Only for `resolved`: when it went away. */
  readonly endsAt?: Date;
}

/** Labels exactly as the spec's table: optional ones only where it says they appear. */
export function alertLabels(a: DeliveredAlertEntry, check: CheckDescription | undefined): LabelSet {
  const labels: LabelSet = {
    alertname: a.code,
    severity: a.severity,
    entity_type: a.entity_type,
    source: ALERT_SOURCE,
    system: a.system,
  };
  if (check) {
    labels.scope = check.scope;
    labels.category = check.category;
  }
  if (a.entity_key !== undefined && a.entity_key !== "") labels.entity_key = a.entity_key;
  if (a.entity_pk !== 0) labels.entity_pk = String(a.entity_pk);
  return sortedKeys(labels);
}

/** Annotations exactly as the spec's table. */
export function alertAnnotations(a: DeliveredAlertEntry, check: CheckDescription | undefined): LabelSet {
  const annotations: LabelSet = {};
  if (a.entity_name !== "") annotations.entity_name = a.entity_name;
  if (check) {
    annotations.summary = check.name;
    annotations.description = check.description;
    if (check.remediation !== "") annotations.remediation = check.remediation;
  }
  return sortedKeys(annotations);
}

/**
 * The link in an alert (spec: Notification deliveries, rule 4): on a node with one system it
 * opens the entity, on a node with several the list of systems; none without an external URL.
 */
export function generatorUrl(
  a: DeliveredAlertEntry,
  externalUrl: string | undefined,
  systemCount: number,
): string {
  if (!externalUrl) return "";
  const base = externalUrl.replace(/\/+$/, "");
  if (systemCount !== 1) return `${base}/systems`;
  const path = [a.system, "entities", a.entity_type, String(a.entity_pk)].map(encodeURIComponent).join("/");
  return `${base}/systems/${path}`;
}

/** Maps are written with their keys sorted, as Go's encoder writes them. */
export function sortedKeys(set: LabelSet): LabelSet {
  return Object.fromEntries(Object.entries(set).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
