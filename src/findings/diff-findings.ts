import { findingId, SEVERITIES, type Finding, type FiringFinding, type Transition } from "../domain/index.ts";

/** What the diff needs to know about the epoch besides its findings. */
export interface DiffContext {
  /** The epoch the findings are of: startsAt of a new finding, endsAt of a resolve. */
  readonly epoch: Date;
  /** Servers that answered in this epoch. */
  readonly answered: ReadonlySet<string>;
  /**
   * Servers the epoch expected (hx.epochs.servers_expected). A finding of a server that is
   * no longer expected (forgotten after scraper.forget-after, or a name no monitored server
   * ever had) resolves when absent: nobody is left to report it. Undefined: every server
   * counts as expected.
   */
  readonly expected?: ReadonlySet<string>;
  /** Codes of checks turned off with `disabled-checks`. */
  readonly disabled: ReadonlySet<string>;
  /** Codes of checks that failed to run in this epoch (their rows are missing, not gone). */
  readonly failed: ReadonlySet<string>;
  /**
   * Entities (`<entity type>|<pk>`) whose state no leader reported in this epoch: streams
   * and consumers during an election or while their leader misses a scrape, and their
   * replicas (a replica's lag is its leader's report). Their findings are held, not resolved.
   */
  readonly leaderless?: ReadonlySet<string>;
}

export interface DiffResult {
  /** In a stable order: by code, entity type, entity pk, entity key. */
  readonly transitions: Transition[];
  /** The baseline after this epoch, keyed by {@link findingId}. */
  readonly baseline: Map<string, FiringFinding>;
}

/**
 * Decides what changed between the baseline (the findings firing after the previous epoch)
 * and the findings of a new epoch (spec: Finding status, Baseline rules):
 * - a finding not in the baseline starts `firing` at this epoch;
 * - one in the baseline at the same severity stays up silently, keeping its startsAt;
 * - one whose severity moved is `changed`, keeping its startsAt, with the severity left behind;
 * - a baseline finding absent now is `resolved` at this epoch, with the name and severity it
 *   held (the entity may be gone), unless its absence says nothing: its server did not answer
 *   (and is still expected), its check failed to run, no server answered at all (nothing
 *   was observed), its stream or consumer had no leader to report it (an election), or, for a
 *   finding of no server (a sum over servers), some expected server did not answer in full;
 * - findings of disabled checks never fire, and baseline entries of a disabled check are
 *   dropped without a resolve (rule 3).
 * A still-firing finding takes the newer name and server.
 */
export function diffFindings(
  baseline: ReadonlyMap<string, FiringFinding>,
  findings: readonly Finding[],
  ctx: DiffContext,
): DiffResult {
  const current = strongestPerIdentity(findings.filter((f) => !ctx.disabled.has(f.code)));
  const next = new Map<string, FiringFinding>();
  const transitions: Transition[] = [];

  for (const [id, finding] of current) {
    const held = baseline.get(id);
    if (held === undefined) {
      const firing = firingSince(finding, ctx.epoch);
      next.set(id, firing);
      transitions.push({ status: "firing", finding: firing });
      continue;
    }
    const firing = firingSince(finding, held.startsAt);
    next.set(id, firing);
    if (held.severity !== finding.severity) {
      transitions.push({ status: "changed", finding: firing, prevSeverity: held.severity });
    }
  }

  for (const [id, held] of baseline) {
    if (current.has(id) || ctx.disabled.has(held.code)) continue;
    if (unobserved(held, ctx)) {
      next.set(id, held);
      continue;
    }
    transitions.push({ status: "resolved", finding: held, endsAt: ctx.epoch });
  }

  transitions.sort((a, b) => compareFindings(a.finding, b.finding));
  return { transitions, baseline: next };
}

/** The finding's own fields only: rows may carry more (the catalog's `disabled` flag). */
function firingSince(f: Finding, startsAt: Date): FiringFinding {
  return {
    code: f.code,
    entityType: f.entityType,
    entityPk: f.entityPk,
    ...(f.entityKey === undefined ? {} : { entityKey: f.entityKey }),
    entityName: f.entityName,
    ...(f.server === undefined ? {} : { server: f.server }),
    severity: f.severity,
    startsAt,
  };
}

/** True when this epoch could not have seen the finding, so its absence is no resolve. */
export function unobserved(held: FiringFinding, ctx: DiffContext): boolean {
  if (ctx.failed.has(held.code)) return true;
  // A stream or consumer between leaders: a finding on it would resolve, then fire again
  // with a new start once a leader is elected.
  if (ctx.leaderless?.has(`${held.entityType}|${held.entityPk}`)) return true;
  // A finding read from one server's reply can only clear when that server answers. One that
  // belongs to no server is a figure over all of them (a user's connections, an account's
  // slow consumers): it clears only once every expected server answered in full, or a server
  // that did not would flap it (resolved, then firing again with a new start).
  if (held.server === undefined) {
    if (ctx.answered.size === 0) return true;
    return [...(ctx.expected ?? [])].some((server) => !ctx.answered.has(server));
  }
  return !ctx.answered.has(held.server) && (ctx.expected?.has(held.server) ?? true);
}

/**
 * One finding per identity. A check should not return two rows for one entity; if it does,
 * the more severe row wins (then the first by name and server), so the result does not depend
 * on row order.
 */
function strongestPerIdentity(findings: readonly Finding[]): Map<string, Finding> {
  const byId = new Map<string, Finding>();
  for (const finding of findings) {
    const id = findingId(finding);
    const other = byId.get(id);
    if (other === undefined || outranks(finding, other)) byId.set(id, finding);
  }
  return byId;
}

function outranks(a: Finding, b: Finding): boolean {
  const rank = SEVERITIES.indexOf(a.severity) - SEVERITIES.indexOf(b.severity);
  if (rank !== 0) return rank > 0;
  return (compareText(a.entityName, b.entityName) || compareText(a.server ?? "", b.server ?? "")) < 0;
}

/** Order of transitions: code, entity type, entity pk, entity key (none first). */
export function compareFindings(a: Finding, b: Finding): number {
  return (
    compareText(a.code, b.code) ||
    compareText(a.entityType, b.entityType) ||
    a.entityPk - b.entityPk ||
    compareKeys(a.entityKey, b.entityKey)
  );
}

function compareKeys(a: string | undefined, b: string | undefined): number {
  if (a === undefined || b === undefined) return a === b ? 0 : a === undefined ? -1 : 1;
  return compareText(a, b);
}

/** Code-unit order, the same in every locale. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
