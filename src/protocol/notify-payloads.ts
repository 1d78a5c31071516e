/**
 * Wire shapes of notifications: the node's outbox entries, the delivered-state records, the
 * delivery log (spec: Delivery log) and the two bodies natsmon POSTs, in the Alertmanager
 * formats (`../shared/reference/alertmanager.md` §2, §3). snake_case where natsmon defines the
 * shape; the Alertmanager bodies keep Alertmanager's own camelCase.
 */
import type { FindingTransition } from "./finding-payloads.ts";

/** One message of the outbox stream: the latest state of one finding of one system. */
export interface OutboxEntry {
  system: string;
  /** The epoch whose checks produced the transition. */
  epoch: string;
  transition: FindingTransition;
}

/** What one endpoint's receiver was told is firing, under `<endpoint_id>.<system>.<finding key>`. */
export interface DeliveredAlertEntry {
  system: string;
  code: string;
  entity_type: string;
  entity_pk: number;
  entity_key?: string;
  entity_name: string;
  severity: FindingTransition["severity"];
  starts_at: string;
}

/** Why a delivery was made. */
export const DELIVERY_KINDS = ["change", "resend", "test", "replay"] as const;
export type DeliveryKind = (typeof DELIVERY_KINDS)[number];

/** One HTTP attempt of a delivery. */
export interface DeliveryAttemptEntry {
  /** 1 to 3 within one delivery. */
  attempt: number;
  /** When the attempt started, RFC 3339. */
  time: string;
  /** `ok`: 2xx; `retry`: failed, tried again later; `rejected`: a 4xx other than 429. */
  outcome: "ok" | "retry" | "rejected";
  /** HTTP status, when the receiver answered. */
  status_code?: number;
  /** The transport error or the start of the error body, when it failed. */
  error?: string;
  duration_ms: number;
}

/**
 * One delivery (up to 3 attempts of one body), as recorded on
 * `$MON.node.<node_id>.webhook.delivery.<endpoint_id>` once it ends, so the stream's 200
 * messages per subject are the endpoint's last 200 deliveries (spec: Limits). `attempt`,
 * `outcome`, `status_code` and `error` are its last attempt's, so the fields of the older log
 * (one message per attempt, no `attempts`) keep their meaning.
 */
export interface DeliveryLogEntry {
  /** When the delivery's first attempt started, RFC 3339. */
  time: string;
  endpoint: string;
  endpoint_type: "webhook" | "alertmanager";
  kind: DeliveryKind;
  /** One per delivery (in an older log, shared by the entries of its attempts). */
  delivery_id: string;
  /** The number of the last attempt made: 1 to 3. */
  attempt: number;
  /** The last attempt's outcome, and so the delivery's. */
  outcome: "ok" | "retry" | "rejected";
  /** The last attempt's HTTP status, when the receiver answered. */
  status_code?: number;
  /** The last attempt's transport error or the start of its error body, when it failed. */
  error?: string;
  /** From the first attempt's start to the last one's end, waits included. */
  duration_ms: number;
  /** Every attempt, in order; absent in entries older natsmon wrote one per attempt. */
  attempts?: DeliveryAttemptEntry[];
  alert_count: number;
  /** Systems whose alerts the body carries. */
  systems: string[];
  /** `sha256:<hex>` of the exact body bytes sent. */
  body_digest: string;
  body_bytes: number;
  /** The exact body, when it fits in a log message; replay re-sends it. */
  body?: string;
}

export type LabelSet = Record<string, string>;

/** One alert of the Alertmanager webhook-receiver body (version 4). */
export interface WebhookAlert {
  status: "firing" | "resolved";
  labels: LabelSet;
  annotations: LabelSet;
  startsAt: string;
  /** `0001-01-01T00:00:00Z` while firing, as Alertmanager sends it. */
  endsAt: string;
  generatorURL: string;
  fingerprint: string;
}

/** The Alertmanager webhook-receiver body, keys in Alertmanager's order. */
export interface WebhookMessage {
  receiver: string;
  status: "firing" | "resolved";
  alerts: WebhookAlert[];
  groupLabels: LabelSet;
  commonLabels: LabelSet;
  commonAnnotations: LabelSet;
  externalURL: string;
  version: "4";
  groupKey: string;
  truncatedAlerts: number;
}

/** One element of the `POST /api/v2/alerts` body. */
export interface PostableAlert {
  labels: LabelSet;
  annotations: LabelSet;
  startsAt: string;
  endsAt: string;
  generatorURL?: string;
}
