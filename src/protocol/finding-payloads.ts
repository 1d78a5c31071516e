/**
 * Wire shapes of findings: the feed's transition payload (spec: Finding transition) and
 * the value of one entry in a system's findings-baseline KV bucket. snake_case as the
 * spec spells it; timestamps RFC 3339.
 */
import type { FindingStatus, Severity, Transition } from "../domain/index.ts";

/** `$MON.sys.<id>.feed.finding.<status>.<severity>.<code>` (spec: Finding transition). */
export interface FindingTransition {
  code: string;
  entity_type: string;
  entity_pk: number;
  /** Resolved at transition time and cached, so a resolve still names a deleted entity. */
  entity_name: string;
  /** Only for a finding whose entity has a key (a replica's server, a service name). */
  entity_key?: string;
  status: FindingStatus;
  /** On a resolve, the severity the finding held when it went away. */
  severity: Severity;
  /** Only on `changed`: the severity left behind. */
  prev_severity?: Severity;
  /** When the finding first appeared; carried across every epoch it stays up. */
  starts_at: string;
  /** Only on `resolved`. */
  ends_at?: string;
}

/** One firing finding, as stored under its key in the findings-baseline bucket. */
export interface FindingBaselineEntry {
  code: string;
  entity_type: string;
  entity_pk: number;
  entity_key?: string;
  /** The name cached for a later resolve. */
  entity_name: string;
  /** The monitored server the finding was read from, when it has one. */
  server?: string;
  severity: Severity;
  starts_at: string;
  /**
   * Only on an entry kept under `x.<catalog id>.…`: the catalog whose entity pks it names, not
   * the one that wrote the baseline (a finding it could not match by name yet, its server silent).
   */
  catalog_id?: string;
}

/** The value of the bucket's `epoch` key: the epoch the stored baseline reflects. */
export interface FindingBaselineEpoch {
  epoch: string;
  /**
   * The catalog file that wrote the baseline (main.catalog_identity): its entries name that
   * file's entity pks. Absent in a baseline written before catalogs had ids.
   */
  catalog_id?: string;
}

/**
 * The value of the bucket's `transitions` key: the transitions of the last epoch that had any,
 * written with its baseline, so they are published again when that epoch's marker comes back
 * (the node stopped after saving the baseline, before or while publishing them).
 */
export interface FindingBaselineTransitions {
  epoch: string;
  transitions: {
    status: FindingStatus;
    finding: FindingBaselineEntry;
    ends_at?: string;
    prev_severity?: Severity;
  }[];
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
