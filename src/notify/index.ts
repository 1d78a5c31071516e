/**
 * ⑥ Notifications: in, each epoch's finding transitions (into the node's outbox stream); out,
 * Alertmanager webhook bodies and v2 alert lists POSTed to the configured endpoints, each by
 * its own sender from its own durable consumer, with every attempt on the delivery log. State:
 * what each endpoint's receiver already knows (a KV bucket per system, shared by every node
 * that holds the system's catalog role), so only differences are sent.
 */
export { startNotifier } from "./notifier.ts";
export { DEFAULT_OUTBOX_PRUNING } from "./notifier.ts";
export type { Notifier, OutboxPruning } from "./notifier.ts";
export { pruneOutbox } from "./outbox-prune.ts";
export { DEFAULT_SENDER_TIMING } from "./endpoint-sender.ts";
export type { SenderTiming } from "./endpoint-sender.ts";
export {
  matchesPattern,
  endpointWants,
  endpointSends,
  endpointFilterDigest,
  receiverDigest,
} from "./patterns.ts";
export type { DisabledChecks } from "./patterns.ts";
export { planDelivery, resendAlerts } from "./plan-delivery.ts";
export { outboxRepairs } from "./outbox-sync.ts";
export type { DeliveryPlan, KeyedEntry } from "./plan-delivery.ts";
export { alertLabels, alertAnnotations, generatorUrl, ALERT_SOURCE } from "./alert-parts.ts";
export type { CheckDescription, DescribeCheck, PlannedAlert } from "./alert-parts.ts";
export { alertFingerprint } from "./fingerprint.ts";
export { goJson, goTime, GO_ZERO_TIME } from "./go-json.ts";
export { deliveryRequests, webhookMessage, postableAlerts, ALERTMANAGER_ENDS_AFTER_MS } from "./bodies.ts";
export type { BodyContext, DeliveryRequest } from "./bodies.ts";
export {
  deliver,
  postOnce,
  requestHeaders,
  targetUrl,
  ATTEMPT_TIMEOUT_MS,
  ATTEMPT_WAITS_MS,
} from "./send.ts";
export type { AttemptResult, DeliveryResult, RecordAttempt } from "./send.ts";
export { failureAdvice, publicUrl } from "./failure-advice.ts";
export { probeEndpoint } from "./probe.ts";
export type { FailureAdvice } from "./failure-advice.ts";
export {
  endpointId,
  deliveryLogWriter,
  loggedEndpoints,
  readDeliveryLog,
  writeDeliveryLogEntry,
} from "./delivery-log.ts";
export { planReplay, replayedBody } from "./replay-plan.ts";
export { currentAlerts, replayClosing } from "./replay-closing.ts";
export { latestOutboxEntries } from "./outbox.ts";
export { readDelivered, readDeliveredIfKept } from "./delivered-store.ts";
export type { ReplayPlan, ReplayStep } from "./replay-plan.ts";
