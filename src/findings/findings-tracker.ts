import {
  EPOCH_CLOCK_TOLERANCE_MS,
  findingId,
  type Finding,
  type FiringFinding,
  type Transition,
} from "../domain/index.ts";
import type { Logger } from "../lib/index.ts";
import { baselineChanges, type BaselineEntry } from "./baseline-changes.ts";
import { baselineKey } from "./baseline-key.ts";
import { keyOf, type FindingsBaselineStore } from "./baseline-store.ts";
import { compareFindings, diffFindings } from "./diff-findings.ts";
import { adoptForeign } from "./foreign-baseline.ts";

/** A finding as the catalog stores it: those of disabled checks are kept, flagged. */
export type EpochFinding = Finding & { readonly disabled?: boolean };

/** What the checks of one epoch found (the catalog's EpochCheckResult fits it). */
export interface EpochFindings {
  readonly epoch: Date;
  readonly findings: readonly EpochFinding[];
  /** Checks that failed to run this epoch: their findings are missing, not gone. */
  readonly failed: readonly { readonly code: string }[];
  /** Servers that answered this epoch. */
  readonly answered: readonly string[];
  /** Servers the epoch expected; a finding of a server no longer expected resolves when absent. */
  readonly expected?: readonly string[];
  /** Streams and consumers no leader reported this epoch (`<type>|<pk>`): their findings are held. */
  readonly leaderless?: readonly string[];
}

/** How the tracker's baseline began (baseline rules 1 and 2). */
export const BaselineStart = {
  /** Loaded from the KV bucket: startsAt and names as a previous run left them. */
  Stored: "stored",
  /** Seeded from the catalog's latest check run, nothing published for it. */
  Seeded: "seeded",
  /** Neither: the first epoch establishes the baseline and publishes nothing. */
  Empty: "empty",
  /**
   * The bucket holds a baseline but the catalog has no check run: the catalog was rebuilt
   * (a new data dir), and the stored entries name the old file's entity pks. The first epoch
   * establishes the baseline and publishes nothing (rule 2), keeping the start of each
   * finding that is still up under the same name.
   */
  Replaced: "replaced",
  /**
   * The bucket holds a baseline another catalog wrote (its id is not this catalog's: the
   * catalog role moved to a node with a catalog file of its own), and this catalog has check
   * runs. The entries name the other file's entity pks, so they are matched to this catalog's
   * findings by name (foreign-baseline.ts): what stays up keeps its start and publishes
   * nothing, what is gone resolves, what is new fires.
   */
  Adopted: "adopted",
} as const;
export type BaselineStart = (typeof BaselineStart)[keyof typeof BaselineStart];

export interface FindingsTracker extends AsyncDisposable {
  readonly start: BaselineStart;
  /**
   * Diffs an epoch's findings against the baseline, saves the changed entries to the KV
   * bucket, and returns the transitions to publish (none for the epoch that establishes an
   * empty baseline, or for an epoch older than the baseline). Calls run one at a time.
   * `beforeSave` gets those transitions before the baseline is saved (the notification
   * outbox): if it fails nothing is saved, so a retry of the epoch finds them again.
   */
  onEpoch(
    result: EpochFindings,
    beforeSave?: (transitions: readonly Transition[]) => Promise<void>,
  ): Promise<Transition[]>;
  /**
   * The findings firing now: keyed by findingId, and by KV key those still held under another
   * catalog's pks (the pks endpoints were told).
   */
  firing(): ReadonlyMap<string, FiringFinding>;
  /** The findings firing now in this catalog's pks (hx.findings_firing), keyed by findingId. */
  catalogFiring(): ReadonlyMap<string, FiringFinding>;
  /**
   * True when the last epoch moved findings from another catalog's pks to this one's: the
   * outbox still names them by the old pks, and is to be brought in line (syncFiring).
   */
  moved(): boolean;
  /** The epoch the firing set reflects; undefined until a baseline exists. */
  baselineEpoch(): Date | undefined;
  /** True until the first epoch has established the baseline (starts empty or replaced). */
  establishing(): boolean;
}

export interface FindingsTrackerOptions {
  readonly store: FindingsBaselineStore;
  /**
   * This catalog file's id (catalogIdentity), saved with the baseline so a catalog with other
   * pks knows the baseline is not in its pks. Undefined: baselines are taken as this catalog's.
   */
  readonly catalogId?: string;
  /** Codes turned off with `disabled-checks` (rule 3). */
  readonly disabledChecks: readonly string[];
  /** The catalog's latest check run, undefined when the checks never ran (catalog: latestEpochFindings). */
  readonly latestFindings: () => Promise<
    { readonly epoch: Date; readonly findings: readonly EpochFinding[] } | undefined
  >;
  /** When each finding of the run at `epoch` started firing without a gap (catalog: firingSince). */
  readonly firingSince: (epoch: Date) => Promise<ReadonlyMap<string, Date>>;
  readonly log: Logger;
  /** This node's clock (default Date.now): a baseline far ahead of it holds nothing back. */
  readonly now?: () => number;
}

/**
 * Starts the findings lifecycle of one system: loads the baseline from its KV bucket, or,
 * when the bucket never held one, seeds it from the catalog's latest check run with each
 * finding's real start (rule 1); with neither, the first epoch only establishes it (rule 2).
 * A restart thus keeps startsAt, and a finding that cleared while the node was down resolves
 * on the first epoch.
 */
export async function startFindingsTracker(options: FindingsTrackerOptions): Promise<FindingsTracker> {
  const { store, log } = options;
  const configured = new Set(options.disabledChecks);
  const { catalogId } = options;
  const stored = await store.load();
  let baseline = stored.findings;
  /** Entries held under other catalogs' pks, keyed by KV key (each names its catalog). */
  let foreign = new Map<string, BaselineEntry>();
  /** The entries as the bucket holds them, by KV key: what the next save writes changes against. */
  let inBucket = new Map<string, BaselineEntry>();
  for (const f of stored.findings.values()) inBucket.set(baselineKey(f), f);
  for (const [key, e] of stored.held) inBucket.set(key, e);
  let baselineEpoch = stored.epoch;
  let start: BaselineStart = BaselineStart.Stored;
  if (stored.saved) {
    if ((await options.latestFindings()) === undefined) start = BaselineStart.Replaced;
    else if (catalogId !== undefined && stored.catalogId !== undefined && stored.catalogId !== catalogId) {
      start = BaselineStart.Adopted;
      const writer = stored.catalogId;
      foreign = new Map(
        [...stored.findings.values()].map((f) => [
          keyOf({ ...f, catalogId: writer }),
          { ...f, catalogId: writer },
        ]),
      );
      baseline = new Map();
    }
    // Entries held under another catalog's pks come home to the catalog they name.
    for (const [key, e] of stored.held) {
      const { catalogId: of, ...finding } = e;
      if (of !== catalogId) foreign.set(key, e);
      else if (!baseline.has(findingId(finding))) baseline.set(findingId(finding), finding);
    }
  } else {
    const latest = await options.latestFindings();
    if (latest === undefined) {
      start = BaselineStart.Empty;
    } else {
      start = BaselineStart.Seeded;
      baseline = await seedFrom(latest, disabledCodes(configured, latest.findings), options.firingSince);
      baselineEpoch = latest.epoch;
      inBucket = kvState(baseline, foreign);
      await store.save(latest.epoch, baselineChanges(new Map(), inBucket), { catalogId });
    }
  }
  /** Transitions saved with the baseline of an epoch, published again if its marker comes back. */
  let saved = stored.transitions;
  log.info(
    { bucket: store.bucket, start, firing: baseline.size + foreign.size, epoch: baselineEpoch },
    start === BaselineStart.Replaced
      ? "findings baseline ready, from a catalog this one replaced: the first epoch establishes it anew and publishes nothing; endpoints are told the findings under their new entity pks"
      : start === BaselineStart.Adopted
        ? "findings baseline ready, written by another catalog (the catalog role moved here): its findings are matched to this catalog's by entity name, keeping their starts; endpoints are told them under this catalog's entity pks"
        : "findings baseline ready",
  );

  let establishing = start === BaselineStart.Empty || start === BaselineStart.Replaced;
  let movedPks = false;
  const now = options.now ?? Date.now;
  /** Epochs not diffed for being older than the baseline, since the last one diffed. */
  const skipped = { count: 0 };
  /**
   * For an epoch older than the baseline: false when it is not diffed (a marker of an
   * epoch already passed: a second scrape node writing beside the first, or a scrape host's
   * clock behind another's). True when the baseline itself is far ahead of this node's clock:
   * it came from an epoch named by a clock that was ahead (stored before such markers were set
   * aside, or while this node's clock was behind), and holding real epochs back behind it would
   * silence the feed until the clocks passed it, so the epoch is diffed.
   */
  const diffedAnyway = (epoch: Date, baselineAt: Date): boolean => {
    const aheadMs = baselineAt.getTime() - now();
    if (aheadMs > EPOCH_CLOCK_TOLERANCE_MS) {
      log.warn(
        { epoch, baseline_epoch: baselineAt, baseline_ahead_ms: aheadMs },
        `the findings baseline is from an epoch ${Math.round(aheadMs / 1000)} s ahead of this node's clock, ` +
          "named by a scrape host whose clock was ahead: epochs are diffed against it anyway, so transitions " +
          "are not held back until the clocks pass it. Check that the scrape and catalog hosts keep time with " +
          "NTP (`timedatectl`, `chronyc tracking`)",
      );
      return true;
    }
    skipped.count++;
    const fields = { epoch, baseline_epoch: baselineAt, behind_ms: baselineAt.getTime() - epoch.getTime() };
    // Said once per run of such epochs, with what to do; the rest at debug.
    if (skipped.count > 1) log.debug(fields, "epoch older than the findings baseline; not diffed");
    else
      log.warn(
        fields,
        "epoch older than the findings baseline: its findings are not diffed and no transitions are published " +
          "for it (nor for later epochs older than the baseline; one line says when diffing resumes). An epoch " +
          "named before the last one diffed comes from a scrape host whose clock is behind the one that named " +
          "the baseline (a clock stepped back, or a scrape node that took over on a host with another time), or " +
          "from two scrape nodes writing epochs at once. Check that the scrape and catalog hosts keep time with " +
          "NTP (`timedatectl`, `chronyc tracking`), and that one node holds the scrape role (`natsmon systems`)",
      );
    return false;
  };
  const onEpoch = async (
    result: EpochFindings,
    beforeSave?: (transitions: readonly Transition[]) => Promise<void>,
  ): Promise<Transition[]> => {
    if (baselineEpoch !== undefined && result.epoch.getTime() < baselineEpoch.getTime()) {
      if (!diffedAnyway(result.epoch, baselineEpoch)) return [];
    } else if (skipped.count > 0) {
      log.info(
        { epoch: result.epoch, skipped: skipped.count },
        "epochs are newer than the findings baseline again: their findings are diffed and transitions published",
      );
      skipped.count = 0;
    }
    // A replaced catalog's pks mean other entities: its first epoch is diffed against nothing.
    const replacing = establishing && start === BaselineStart.Replaced;
    const ctx = {
      epoch: result.epoch,
      answered: new Set(result.answered),
      ...(result.expected ? { expected: new Set(result.expected) } : {}),
      ...(result.leaderless ? { leaderless: new Set(result.leaderless) } : {}),
      disabled: disabledCodes(configured, result.findings),
      failed: new Set(result.failed.map((f) => f.code)),
    };
    // Entries of another catalog go by name into this one's pks first (none once all are matched).
    const adopted =
      replacing || foreign.size === 0 ? undefined : adoptForeign(foreign, baseline, result.findings, ctx);
    const diffed = diffFindings(replacing ? new Map() : (adopted?.own ?? baseline), result.findings, ctx);
    const transitions = [...(adopted?.resolved ?? []), ...diffed.transitions].sort((a, b) =>
      compareFindings(a.finding, b.finding),
    );
    const next = replacing ? keepStarts(diffed.baseline, baseline) : diffed.baseline;
    const nextForeign = replacing ? new Map<string, BaselineEntry>() : (adopted?.foreign ?? foreign);
    // The marker of an epoch whose baseline was saved comes back when the node stopped before
    // it had published all: the transitions saved with it are published again (a repeat of
    // those it had published carries the same message id on the feed and in the outbox).
    const again = saved?.epoch.getTime() === result.epoch.getTime() ? saved : undefined;
    const published = again ? again.transitions : establishing ? [] : transitions;
    if (again)
      log.info(
        { epoch: result.epoch, transitions: published.length },
        "the epoch's transitions were saved with the findings baseline before this marker came back: they are published again",
      );
    if (beforeSave && published.length > 0) await beforeSave(published);
    const nextInBucket = kvState(next, nextForeign);
    await store.save(result.epoch, baselineChanges(inBucket, nextInBucket), {
      catalogId,
      ...(again ? {} : { transitions: published }),
    });
    if (!again && published.length > 0) saved = { epoch: result.epoch, transitions: published };
    movedPks = (adopted?.moved ?? 0) > 0;
    if (adopted && adopted.foreign.size === 0)
      log.info(
        { epoch: result.epoch, moved: adopted.moved },
        "the findings of the other catalog's baseline are all matched or resolved",
      );
    baseline = next;
    foreign = nextForeign;
    inBucket = nextInBucket;
    baselineEpoch = result.epoch;
    if (establishing) {
      establishing = false;
      log.info({ epoch: result.epoch, firing: next.size }, "first epoch established the findings baseline");
    }
    return published;
  };

  // One epoch at a time: each diff starts from the baseline the previous one saved.
  let queue: Promise<unknown> = Promise.resolve();
  return {
    start,
    onEpoch(result, beforeSave) {
      const run = queue.then(() => onEpoch(result, beforeSave));
      queue = run.catch(() => undefined);
      return run;
    },
    // A check disabled since the baseline was saved fires nothing (rule 3), though the stored
    // baseline holds its findings until the next diff drops them.
    firing: () => {
      const here = enabled(baseline, configured);
      if (foreign.size === 0) return here;
      return new Map([...here, ...enabled(foreign, configured)]);
    },
    catalogFiring: () => enabled(baseline, configured),
    moved: () => movedPks,
    baselineEpoch: () => baselineEpoch,
    establishing: () => establishing,
    async [Symbol.asyncDispose]() {
      await queue;
    },
  };
}

/**
 * A finding's identity by name (code, entity type, name, key), for a catalog rebuilt with new
 * pks. A name two findings share tells nothing, so it matches nothing.
 */
const nameOf = (f: FiringFinding) =>
  JSON.stringify([f.code, f.entityType, f.entityName, f.entityKey ?? null]);

function byName(findings: Iterable<FiringFinding>): Map<string, FiringFinding | null> {
  const named = new Map<string, FiringFinding | null>();
  for (const f of findings) named.set(nameOf(f), named.has(nameOf(f)) ? null : f);
  return named;
}

/** `next` with the start of each finding the old baseline held under the same name. */
function keepStarts(
  next: ReadonlyMap<string, FiringFinding>,
  old: ReadonlyMap<string, FiringFinding>,
): Map<string, FiringFinding> {
  const oldByName = byName(old.values());
  const nextByName = byName(next.values());
  const kept = new Map<string, FiringFinding>();
  for (const [id, f] of next) {
    const before = oldByName.get(nameOf(f));
    kept.set(id, before && nextByName.get(nameOf(f)) === f ? { ...f, startsAt: before.startsAt } : f);
  }
  return kept;
}

/** The entries of checks not disabled. */
function enabled<T extends FiringFinding>(
  entries: ReadonlyMap<string, T>,
  configured: ReadonlySet<string>,
): ReadonlyMap<string, T> {
  return [...entries.values()].some((f) => configured.has(f.code))
    ? new Map([...entries].filter(([, f]) => !configured.has(f.code)))
    : entries;
}

/** The entries as the bucket is to hold them, by KV key. */
function kvState(
  own: ReadonlyMap<string, FiringFinding>,
  foreign: ReadonlyMap<string, BaselineEntry>,
): Map<string, BaselineEntry> {
  const state = new Map<string, BaselineEntry>();
  for (const f of own.values()) state.set(baselineKey(f), f);
  for (const [key, e] of foreign) state.set(key, e);
  return state;
}

/** Configured codes plus any the catalog flagged disabled on a row. */
function disabledCodes(configured: ReadonlySet<string>, findings: readonly EpochFinding[]): Set<string> {
  const codes = new Set(configured);
  for (const f of findings) if (f.disabled === true) codes.add(f.code);
  return codes;
}

async function seedFrom(
  latest: { readonly epoch: Date; readonly findings: readonly EpochFinding[] },
  disabled: ReadonlySet<string>,
  firingSince: (epoch: Date) => Promise<ReadonlyMap<string, Date>>,
): Promise<Map<string, FiringFinding>> {
  // The diff against nothing gives the baseline of that run (one entry per identity,
  // disabled checks left out); the catalog then says when each one really started.
  const { baseline } = diffFindings(new Map(), latest.findings, {
    epoch: latest.epoch,
    answered: new Set(),
    disabled,
    failed: new Set(),
  });
  const since = await firingSince(latest.epoch);
  const seeded = new Map<string, FiringFinding>();
  for (const [id, f] of baseline) seeded.set(id, { ...f, startsAt: since.get(id) ?? latest.epoch });
  return seeded;
}
