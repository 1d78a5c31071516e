import type { NatsConnection } from "@nats-io/nats-core";
import type { Transition } from "../domain/index.ts";
import { systemSubjects, type FindingTransition } from "../protocol/index.ts";

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

/** The spec's Finding transition: optional fields appear only where the spec says they do. */
export function transitionPayload(t: Transition): FindingTransition {
  const f = t.finding;
  const common = {
    code: f.code,
    entity_type: f.entityType,
    entity_pk: f.entityPk,
    entity_name: f.entityName,
    // Only for an entity that has a key; an empty key is no key (spec: alert labels).
    ...(f.entityKey === undefined || f.entityKey === "" ? {} : { entity_key: f.entityKey }),
  };
  const startsAt = f.startsAt.toISOString();
  switch (t.status) {
    case "firing":
      return { ...common, status: "firing", severity: f.severity, starts_at: startsAt };
    case "changed":
      return {
        ...common,
        status: "changed",
        severity: f.severity,
        prev_severity: t.prevSeverity,
        starts_at: startsAt,
      };
    case "resolved":
      // The severity the finding held when it went away.
      return {
        ...common,
        status: "resolved",
        severity: f.severity,
        starts_at: startsAt,
        ends_at: t.endsAt.toISOString(),
      };
  }
}
