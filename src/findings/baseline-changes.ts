import type { FiringFinding } from "../domain/index.ts";

/** What to write to the stored baseline to turn `prev` into `next`. */
export interface BaselineChanges {
  /** Entries new or different in any field (severity, name, server, …). */
  readonly put: readonly FiringFinding[];
  /** Entries gone: resolved, or dropped because their check was disabled. */
  readonly remove: readonly FiringFinding[];
}

/**
 * The difference between two baselines, so an epoch writes only what changed: a finding
 * that stays up unchanged costs nothing.
 */
export function baselineChanges(
  prev: ReadonlyMap<string, FiringFinding>,
  next: ReadonlyMap<string, FiringFinding>,
): BaselineChanges {
  const put: FiringFinding[] = [];
  const remove: FiringFinding[] = [];
  for (const [id, entry] of next) {
    const before = prev.get(id);
    if (before === undefined || !sameEntry(before, entry)) put.push(entry);
  }
  for (const [id, entry] of prev) if (!next.has(id)) remove.push(entry);
  return { put, remove };
}

function sameEntry(a: FiringFinding, b: FiringFinding): boolean {
  return (
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
