import { headers, type NatsConnection } from "@nats-io/nats-core";
import { findingKeyTokens, type Transition } from "../domain/index.ts";
import { systemSubjects, transitionPayload } from "../protocol/index.ts";

/**
 * Broadcasts each transition on `feed.finding.<status>.<severity>.<code>`: fire and forget,
 * not stored (spec: Broadcast feeds). The catalog side calls it after the epoch's feed.epoch.
 * Each message carries a `Nats-Msg-Id` header naming the system, the epoch and the finding,
 * as its outbox entry does: the transitions of an epoch whose node stopped before it had
 * published them all are published again when its marker comes back, and a subscriber tells
 * a repeat by that id (a stream capturing the feed drops it within its duplicate window).
 */
export function publishTransitions(
  nc: NatsConnection,
  systemId: string,
  epoch: Date,
  transitions: readonly Transition[],
): void {
  const subjects = systemSubjects(systemId);
  const epochText = epoch.toISOString();
  for (const t of transitions) {
    const payload = transitionPayload(t);
    const h = headers();
    h.set("Nats-Msg-Id", `${systemId}|${epochText}|${findingKeyTokens(t.finding).join(".")}`);
    nc.publish(
      subjects.feedFinding(payload.status, payload.severity, payload.code),
      JSON.stringify(payload),
      {
        headers: h,
      },
    );
  }
}
