import type { NatsConnection } from "@nats-io/nats-core";
import type { Transition } from "../domain/index.ts";
import { systemSubjects, transitionPayload } from "../protocol/index.ts";

/**
 * Broadcasts each transition on `feed.finding.<status>.<severity>.<code>`: fire and forget,
 * not stored (spec: Broadcast feeds). The catalog side calls it after the epoch's feed.epoch.
 */
export function publishTransitions(
  nc: NatsConnection,
  systemId: string,
  transitions: readonly Transition[],
): void {
  const subjects = systemSubjects(systemId);
  for (const t of transitions) {
    const payload = transitionPayload(t);
    nc.publish(subjects.feedFinding(payload.status, payload.severity, payload.code), JSON.stringify(payload));
  }
}
