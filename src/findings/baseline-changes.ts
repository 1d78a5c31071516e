import type { FiringFinding } from "../domain/index.ts";

/**
 * A baseline entry as stored: a firing finding, and for one held under the entity pk of
 * another catalog than the one that writes the baseline, that catalog's id (its KV key is
 * then foreignKey, not baselineKey).
 */
export type BaselineEntry = FiringFinding & { readonly catalogId?: string };

/** What to write to the stored baseline to turn `prev` into `next`. */
export interface BaselineChanges {
  /** Entries new or different in any field (severity, name, server, …). */
  readonly put: readonly BaselineEntry[];
  /** Entries gone: resolved, or dropped because their check was disabled. */
  readonly remove: readonly BaselineEntry[];
}

/**
 * The difference between two baselines, so an epoch writes only what changed: a finding
 * that stays up unchanged costs nothing.
 */
export function baselineChanges(
  prev: ReadonlyMap<string, BaselineEntry>,
  next: ReadonlyMap<string, BaselineEntry>,
): BaselineChanges {
  const put: BaselineEntry[] = [];
  const remove: BaselineEntry[] = [];
  for (const [id, entry] of next) {
    const before = prev.get(id);
    if (before === undefined || !sameEntry(before, entry)) put.push(entry);
  }
  for (const [id, entry] of prev) if (!next.has(id)) remove.push(entry);
  return { put, remove };
}

function sameEntry(a: BaselineEntry, b: BaselineEntry): boolean {
  return (
    a.catalogId === b.catalogId &&
    a.code === b.code &&
    a.entityType === b.entityType &&
    a.entityPk === b.entityPk &&
    a.entityKey === b.entityKey &&
    a.entityName === b.entityName &&
    a.server === b.server &&
    a.severity === b.severity &&
    a.startsAt.getTime() === b.startsAt.getTime()
  );
}
