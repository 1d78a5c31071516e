import { findingId, type Finding, type FiringFinding, type Transition } from "../domain/index.ts";
import type { BaselineEntry } from "./baseline-changes.ts";
import { unobserved, type DiffContext } from "./diff-findings.ts";

/** What matching the entries of another catalog against an epoch's findings gives. */
export interface Adoption {
  /** This catalog's baseline with the matched entries added under this catalog's pks. */
  readonly own: Map<string, FiringFinding>;
  /** Entries still held under the other catalog's pks: their server did not answer, their check failed. */
  readonly foreign: Map<string, BaselineEntry>;
  /** Entries of the other catalog whose finding is gone, resolved under the pk they fired with. */
  readonly resolved: Transition[];
  /** How many entries now go by this catalog's pk (the outbox still names them by the old one). */
  readonly moved: number;
}

/**
 * A finding's identity without its pk: code, entity type, entity name and key, all a check
 * derives the entity pk from. Another catalog file numbers its entities otherwise, so its
 * baseline is matched by this.
 */
const nameOf = (f: Finding) => JSON.stringify([f.code, f.entityType, f.entityName, f.entityKey ?? null]);

/**
 * Matches baseline entries another catalog wrote (`foreign`, keyed by KV key, in that
 * catalog's entity pks) to this epoch's findings by name, so a role that moved to a node
 * with a catalog of its own neither fires again what stays up nor resolves it:
 * - an entry whose name one finding of this epoch has goes into this catalog's baseline under
 *   that finding's pk, keeping its start and severity (the diff then says `changed` if the
 *   severity moved); one this catalog's baseline already holds is dropped;
 * - an entry of a disabled check is dropped (rule 3);
 * - one this epoch could not have seen (its server did not answer, its check failed) is held,
 *   still under the other catalog's pk (a stream or consumer between leaders cannot be told,
 *   as its pk here is not known);
 * - any other is resolved, under the pk and name it fired with: its finding is gone.
 * A name two findings (or two entries) share matches nothing.
 */
export function adoptForeign(
  foreign: ReadonlyMap<string, BaselineEntry>,
  own: ReadonlyMap<string, FiringFinding>,
  findings: readonly Finding[],
  ctx: DiffContext,
): Adoption {
  const current = new Map<string, Finding | null>();
  for (const f of findings) {
    if (ctx.disabled.has(f.code)) continue;
    const other = current.get(nameOf(f));
    current.set(nameOf(f), other === undefined || (other && findingId(other) === findingId(f)) ? f : null);
  }
  const entries = new Map<string, number>();
  for (const e of foreign.values()) entries.set(nameOf(e), (entries.get(nameOf(e)) ?? 0) + 1);

  const next = new Map(own);
  const held = new Map<string, BaselineEntry>();
  const resolved: Transition[] = [];
  let moved = 0;
  const { leaderless: _unknownHere, ...observed } = ctx;
  for (const [key, entry] of foreign) {
    const { catalogId: _other, ...finding } = entry;
    if (ctx.disabled.has(entry.code)) continue;
    const match = entries.get(nameOf(entry)) === 1 ? current.get(nameOf(entry)) : undefined;
    if (match) {
      const id = findingId(match);
      if (!next.has(id)) next.set(id, { ...finding, entityPk: match.entityPk });
      moved++;
      continue;
    }
    if (unobserved(entry, observed)) held.set(key, entry);
    else resolved.push({ status: "resolved", finding, endsAt: ctx.epoch });
  }
  return { own: next, foreign: held, resolved, moved };
}
