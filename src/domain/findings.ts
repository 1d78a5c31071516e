/**
 * Findings and their transitions (spec: Finding transition, Finding status). A finding is
 * one check firing for one entity in one epoch; its identity is (code, entity type, entity
 * pk, entity key), and a transition is what changed for that identity between two epochs.
 */

export const Severity = { Info: "info", Warning: "warning", Critical: "critical" } as const;
export type Severity = (typeof Severity)[keyof typeof Severity];
export const SEVERITIES: readonly Severity[] = [Severity.Info, Severity.Warning, Severity.Critical];

export function isSeverity(value: unknown): value is Severity {
  return typeof value === "string" && (SEVERITIES as readonly string[]).includes(value);
}

export const FindingStatus = { Firing: "firing", Resolved: "resolved", Changed: "changed" } as const;
export type FindingStatus = (typeof FindingStatus)[keyof typeof FindingStatus];

/** One row a check returned for one entity in one epoch. */
export interface Finding {
  readonly code: string;
  /** The kind of entity: server, stream, consumer, stream_replica, meta_peer, route, … */
  readonly entityType: string;
  readonly entityPk: number;
  /** Set where the entity has a key of its own (a replica's server, a service name). */
  readonly entityKey?: string;
  readonly entityName: string;
  /** The monitored server whose reply the row comes from; a finding whose server did not answer is not resolved. */
  readonly server?: string;
  readonly severity: Severity;
}

/** A finding in the baseline: it is firing, since `startsAt`. */
export interface FiringFinding extends Finding {
  readonly startsAt: Date;
}

export type Transition =
  | { readonly status: "firing"; readonly finding: FiringFinding }
  | { readonly status: "resolved"; readonly finding: FiringFinding; readonly endsAt: Date }
  | { readonly status: "changed"; readonly finding: FiringFinding; readonly prevSeverity: Severity };

/** The identity of a finding across epochs (and the key of its baseline entry). */
export function findingId(f: Pick<Finding, "code" | "entityType" | "entityPk" | "entityKey">): string {
  return f.entityKey === undefined
    ? `${f.code}|${f.entityType}|${f.entityPk}`
    : `${f.code}|${f.entityType}|${f.entityPk}|${f.entityKey}`;
}

/** Old-style codes such as `SERVER_001` name the same check as `server-001`. */
export function currentCheckCode(code: string): string {
  return code.toLowerCase().replaceAll("_", "-");
}

/** True for a code in the old upper-case underscore form (`SERVER_001`, `OPT_SYS_001`). */
export function isOldStyleCode(code: string): boolean {
  return /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$/.test(code);
}

/** A token KV keys and subjects take as is: no `=`, so it never looks like an encoded one. */
const PLAIN_TOKEN = /^[-\w]+$/;

/**
 * The tokens that name a finding in KV keys and subjects: `<code>.<entity type>.<entity pk>
 * [.<entity key>]`, readable for the usual codes, types and server names. Keys and subjects
 * take only a few characters safely, so a token with anything else (an entity key with spaces
 * or dots, an empty one) is written as `=` plus its base64url: plain tokens never hold `=`,
 * base64url without padding never does either, so two identities never share tokens.
 */
export function findingKeyTokens(
  f: Pick<Finding, "code" | "entityType" | "entityPk" | "entityKey">,
): string[] {
  const tokens = [f.code, f.entityType, String(f.entityPk)];
  if (f.entityKey !== undefined) tokens.push(f.entityKey);
  return tokens.map((text) =>
    PLAIN_TOKEN.test(text) ? text : `=${Buffer.from(text, "utf8").toString("base64url")}`,
  );
}

/**
 * Codes of checks that no longer exist, with what took their place. Notification patterns
 * naming one are accepted with a warning and send nothing (spec: Pattern rules, rule 4).
 */
export const RETIRED_CHECKS: ReadonlyMap<string, string> = new Map([
  ["jetstream-012", "merged into server-019 (JetStream storage use)"],
  ["jetstream-016", "merged into server-019 (JetStream storage use)"],
]);
