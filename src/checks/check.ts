import type { Severity } from "../domain/index.ts";

/** Check categories (reference catalogue), with the label checks.list groups by. */
export const CATEGORIES = {
  health: "Health",
  consistency: "Consistency",
  performance: "Performance",
  saturation: "Saturation",
  errors: "Errors",
  change: "Change",
} as const;
export type Category = keyof typeof CATEGORIES;

/** A threshold: a named parameter of the check's macro, `p_…`, with its default. */
export interface CheckParam {
  readonly name: string;
  readonly default: number;
  readonly description: string;
}

/** A column of a finding's detail, after the fixed columns of every check macro. */
export interface DetailColumn {
  readonly name: string;
  /** DuckDB type name as `DESCRIBE` prints it: VARCHAR, BIGINT, DOUBLE, INTEGER, BOOLEAN, TIMESTAMP WITH TIME ZONE, … */
  readonly type: string;
  readonly description: string;
}

/**
 * One check: metadata plus the body of its DuckDB table macro.
 *
 * The macro is created as `checks.<code with - as _>(ep_from, ep_to, <params> := <default>)`
 * and returns, for every epoch in [ep_from, ep_to] (both TIMESTAMPTZ, inclusive), one row
 * per entity the check fires for, with the columns of {@link FIXED_COLUMNS} first and then
 * exactly `detailColumns`, in order. The engine runs it with ep_from = ep_to = the new epoch;
 * checks.findings runs it over a window.
 *
 * An optimization check (`optimization: true`) never runs after an epoch: checks.findings runs
 * it on demand over a window, by default the `lookbackSeconds` before the latest epoch. Its
 * macro returns at most one row per entity (and entity_key), about the latest epoch in
 * [ep_from, ep_to] that holds the entity: a condition on the entity's state is read at that
 * epoch, and a condition over time (no progress, growth, a share of the traffic) over every
 * epoch of the window.
 */
export interface Check {
  readonly code: string;
  readonly name: string;
  readonly description: string;
  readonly remediation: string;
  /** What a finding is about, as the catalogue says it: server, stream, consumer replica, … */
  readonly scope: string;
  /**
   * The entity_type of its findings: server, stream, consumer, stream_replica, consumer_replica,
   * meta_cluster, meta_peer, route, gateway, connection, leafnode, account; user, service, import and export are
   * named within their account (entity_pk the account's, entity_key the user, service, import or export);
   * leafnode_remote within its server (entity_pk the server's, entity_key the remote's account).
   */
  readonly entityType: string;
  /** A fixed severity, or `dynamic` when the macro computes it per row. */
  readonly severity: Severity | "dynamic";
  readonly category: Category;
  readonly optimization: boolean;
  readonly params: readonly CheckParam[];
  readonly detailColumns: readonly DetailColumn[];
  /** Set when the check reads a field older monitored servers do not report (e.g. "2.10.0"). */
  readonly minServerVersion?: string;
  /** Optimization checks only (and required there): the default window of checks.findings, in seconds. */
  readonly lookbackSeconds?: number;
  /** The SELECT the macro returns (it may use ep_from, ep_to and the params by name). */
  readonly sql: string;
}

/**
 * The columns every check macro returns first, in this order:
 * epoch, entity_pk (the entity's hx pk), entity_name (display name), entity_key (NULL unless
 * the entity has a key, e.g. a replica's server name), server (the monitored server the row
 * comes from; NULL when none), severity (info|warning|critical).
 */
export const FIXED_COLUMNS: readonly DetailColumn[] = [
  { name: "epoch", type: "TIMESTAMP WITH TIME ZONE", description: "Epoch the row is about." },
  { name: "entity_pk", type: "INTEGER", description: "Key of the entity in its hx _ident table." },
  { name: "entity_name", type: "VARCHAR", description: "Display name of the entity." },
  { name: "entity_key", type: "VARCHAR", description: "Key within the entity, where it has one." },
  { name: "server", type: "VARCHAR", description: "Monitored server the figures come from." },
  { name: "severity", type: "VARCHAR", description: "info, warning or critical." },
];

/** `server-001` → `server_001`: the macro name in the checks schema. */
export function macroName(code: string): string {
  return `checks.${code.replaceAll("-", "_")}`;
}
