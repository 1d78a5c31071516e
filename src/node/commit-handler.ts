/**
 * ③–⑥ One commit marker on the catalog side: fold the epoch, announce it, run the checks,
 * hand the transitions to the notifier and the feed, then ack. Split from catalog-side.ts.
 */
import type { NatsConnection } from "@nats-io/nats-core";
import { PartReadError, type CommitDelivery, type ScrapePart } from "../bus/index.ts";
import {
  FoldDataError,
  foldEpoch,
  runEpochChecks,
  writeFiringFindings,
  type Catalog,
  type EpochCheckResult,
} from "../catalog/index.ts";
import { epochCheckStatements } from "../checks/index.ts";
import type { SystemConfig } from "../config/index.ts";
import { parseEpoch } from "../domain/index.ts";
import type { CommitMarker } from "../protocol/index.ts";
import { publishEpoch, publishTransitions } from "../feed/index.ts";
import { diffFindings, type FindingsTracker } from "../findings/index.ts";
import { parseJsonExact, type Logger, type NodeMetrics } from "../lib/index.ts";
import type { Notifier } from "../notify/index.ts";
import type { ScrapeFaults } from "../scrape/index.ts";
import { DROPPED_HINT, droppedPartsMessage } from "./dropped-parts.ts";
import { setAsideFutureEpoch } from "./future-epoch.ts";

/**
 * How long the server waits for an ack before redelivering a marker. A fold in progress
 * says `working` every third of it; a node that died holding a marker gets it back this soon.
 */
export const ACK_WAIT_MS = 15_000;
/** Delay before a marker whose fold failed is tried again. */
const RETRY_MS = 5_000;
/**
 * Deliveries of a marker after which a fold failing on the epoch's own data (FoldDataError)
 * sets the marker aside: more than one, as a constraint error can also come from a key
 * cache that drifted from the file, which the failed fold reloads.
 */
export const MAX_DATA_FAILURES = 3;

export async function handleCommit(
  catalog: Catalog,
  delivery: CommitDelivery,
  ctx: {
    sink: NatsConnection;
    /** Absent for a catalog that opened late: checks run and are stored, nothing is published. */
    tracker: FindingsTracker | undefined;
    notifier: Notifier;
    metrics: NodeMetrics;
    system: SystemConfig;
    systemId: string;
    nodeId: string;
    log: Logger;
    /** Crash points of the crash-safety tests (catalog side: before the parts, after the fold, after the baseline). */
    faults: ScrapeFaults | undefined;
    /** When this catalog side started: epochs scraped since then tell what is firing now. */
    startedAt: Date;
    /** True while this node still holds the catalog role; undefined: no claims on this node. */
    confirmRole: (() => Promise<boolean>) | undefined;
    /** This node's clock (ms), for the future-epoch check; undefined: Date.now. */
    now?: (() => number) | undefined;
    /** Aborted once the catalog side stops: the epoch is left where it is, as a crash would leave it. */
    stopping?: AbortSignal | undefined;
    /** Takes the marker of an epoch left for the stop, to hand it back once the pull has stopped. */
    leave?: ((delivery: CommitDelivery) => void) | undefined;
  },
): Promise<void> {
  const { marker, seq } = delivery;
  if (setAsideFutureEpoch(delivery, ctx)) return;
  const log = ctx.log.child({ epoch: marker.epoch, seq });
  if (leftForStop(ctx, delivery, log)) return;
  try {
    const keepAlive = setInterval(() => delivery.working(), ACK_WAIT_MS / 3);
    let result;
    try {
      await ctx.faults?.beforeReadParts?.();
      const parts = await delivery.readParts();
      const replies = parts.map((part) => ({
        source: part.source,
        server: part.server,
        ...(part.page ? { page: part.page } : {}),
        body:
          "text" in part
            ? parseBody(part.text)
            : errorEnvelope(part.dropped ? `${part.missing}: ${DROPPED_HINT}` : part.missing),
      }));
      const now = ctx.now?.() ?? Date.now();
      const dropped = droppedPartsMessage(ctx.systemId, marker, parts, ctx.system.scraper.stream, now);
      result = await foldEpoch(catalog, {
        markerSeq: seq,
        marker: withMissingAsPartial(marker, parts),
        replies,
        retention: { retentionMs: ctx.system.db.retentionMs },
      });
      // Said once per epoch, by the fold that recorded the loss: a marker handed out again (a
      // retry, a restart, a stop) finds the epoch folded, its parts' loss already told.
      if (dropped && result.status === "folded") log.warn(dropped);
    } finally {
      clearInterval(keepAlive);
    }
    ctx.faults?.afterFold?.();
    if (result.status === "folded") {
      log.info({ rows: result.rows, ms: Math.round(result.ms) }, "epoch folded");
      ctx.metrics.epochFolded(ctx.systemId, result.ms / 1000, result.rows);
      publishEpoch(ctx.sink, ctx.systemId, ctx.nodeId, parseEpoch(marker.epoch));
    } else {
      log.info({ reason: result.reason }, "epoch already folded; its checks run if they have not");
    }
    if (leftForStop(ctx, delivery, log)) return;
    // ④ Checks over the epoch; a redelivered epoch whose checks ran reads them back. While
    // newer epochs wait (a backlog after downtime, or epochs arriving faster than checks run),
    // only folding keeps up: the checks run on the newest epoch, so findings stay current and
    // the catalog does not fall further behind. Every epoch is still folded. A marker handed out
    // again that the baseline has not passed is no backlog but the epoch a crash or stop cut off:
    // its transitions are owed, with its own starts (a later epoch fires them late, or never).
    if (delivery.behind > 0 && !owed(delivery, ctx.tracker)) {
      log.debug({ behind: delivery.behind }, "newer epochs are waiting; checks run on the newest");
      if (await lostRole(ctx, delivery, log)) return;
      await delivery.ack();
      return;
    }
    const checked = await runEpochChecks(catalog, marker.epoch, epochCheckStatements(ctx.system));
    if (leftForStop(ctx, delivery, log)) return;
    if (await lostRole(ctx, delivery, log)) return;
    if (checked?.ran) {
      logChecks(log, checked);
      ctx.metrics.checksRan(ctx.systemId, checked.ms / 1000, checked.failed.length);
    }
    // ⑤ Transitions since the baseline, stored in the notification outbox and then saved to
    // KV before they are published: a crash before the save redelivers the marker and writes
    // the same outbox entries again (deduplicated); a crash after it finds nothing new.
    if (checked && ctx.tracker) {
      const epoch = parseEpoch(marker.epoch);
      const establishing = ctx.tracker.establishing();
      const transitions = await ctx.tracker.onEpoch({ epoch, ...checked }, (found) =>
        ctx.notifier.enqueue(ctx.systemId, epoch, found),
      );
      if (transitions.length > 0) ctx.faults?.afterBaselineSave?.();
      // The first baseline publishes nothing (baseline rule 2), yet endpoints are to know
      // what is firing: its findings go to the outbox as the start-up sync would put them. So
      // too when findings of another catalog's baseline now go by this catalog's pks.
      if (establishing || ctx.tracker.moved())
        await syncNotifications(ctx.notifier, ctx.systemId, ctx.tracker, log);
      // The outbox now says what is firing as of this epoch (an epoch older than the baseline
      // is not diffed): endpoints new to it may have their first delivery, once the epoch was
      // scraped since this catalog started (not one left from before, folded as a backlog) and
      // held nothing back unobserved (a server that did not answer in full, a check that failed,
      // an election), whose findings may have cleared while natsmon was down.
      if (
        ctx.tracker.baselineEpoch()?.getTime() === epoch.getTime() &&
        epoch.getTime() >= ctx.startedAt.getTime() &&
        observedAll(checked)
      )
        ctx.notifier
          .epochDiffed(ctx.systemId)
          .catch((err: unknown) =>
            log.warn({ err }, "endpoints waiting for a fresh epoch were not told of it"),
          );
      publishTransitions(ctx.sink, ctx.systemId, epoch, transitions);
      for (const status of ["firing", "resolved", "changed"] as const)
        ctx.metrics.transitions(ctx.systemId, status, transitions.filter((t) => t.status === status).length);
      if (transitions.length > 0)
        log.info({ transitions: transitions.length }, "finding transitions published");
      await recordFiring(catalog, ctx.tracker);
      ctx.metrics.firing(ctx.systemId, ctx.tracker.firing().values());
    } else if (checked) {
      // No feed here (the catalog opened late): the grades show this epoch's findings.
      const epoch = parseEpoch(marker.epoch);
      const disabled = new Set(checked.findings.filter((f) => f.disabled).map((f) => f.code));
      const { baseline } = diffFindings(new Map(), checked.findings, {
        epoch,
        answered: new Set(),
        disabled,
        failed: new Set(),
      });
      await writeFiringFindings(catalog, epoch, baseline.values());
    }
    await delivery.ack();
  } catch (err) {
    if (err instanceof PartReadError) {
      // Not counted as a failed fold: the data is in the stream, and folding the epoch without
      // it would lose it for good. Retried until the sink answers; a part that ages out in the
      // meantime is then "not found", and folded as missing with the loss recorded.
      log[err.transient ? "warn" : "error"](
        { err },
        `${err.message}; the epoch is not folded without it and is retried in ${RETRY_MS / 1000} s`,
      );
      delivery.nak(RETRY_MS);
      return;
    }
    if (err instanceof FoldDataError) {
      setAsideOrRetry(delivery, err, ctx, log);
      return;
    }
    // The marker comes back after a pause; the fold is one transaction, so a retry starts clean.
    log.error(
      { err },
      "epoch not completed (fold, checks, baseline or outbox failed); its marker is retried",
    );
    delivery.nak(RETRY_MS);
  }
}

/**
 * A fold that failed on the epoch's own data fails the same way every time, and the consumer
 * hands out one marker at a time: kept, the marker would hold up every later epoch until the
 * stream's max age dropped them. It is tried MAX_DATA_FAILURES times (counted by the server,
 * so a restart or another node does not start the count again), then terminated, as an
 * unreadable marker is, and ingest goes on with the next one. The epoch's data stays in the
 * scrape stream until its max age; the log says where.
 */
function setAsideOrRetry(
  delivery: CommitDelivery,
  err: FoldDataError,
  ctx: { systemId: string; metrics: NodeMetrics },
  log: Logger,
): void {
  const { systemId } = ctx;
  const attempt = delivery.deliveries;
  if (attempt < MAX_DATA_FAILURES) {
    log.error(
      { err, attempt, of: MAX_DATA_FAILURES },
      "epoch not folded: its own data makes the fold fail; it is tried again, then set aside",
    );
    delivery.nak(RETRY_MS);
    return;
  }
  log.error(
    { err, attempt, error: err.message },
    `epoch set aside, not folded: its data made the fold fail ${attempt} times (${err.message}); ` +
      "later epochs are folded and this one stays missing from the catalog. Its commit marker " +
      `is message ${delivery.seq} of the scrape stream of system ${systemId} (kept until the stream's max age): ` +
      "read it with `nats stream get`, and report the error with it",
  );
  ctx.metrics.markerSetAside(systemId, "data-error");
  delivery.term();
}

/**
 * True once the catalog side is stopping: what is left of the epoch (checks, the baseline and
 * outbox on the sink, the ack) is not begun. A stop must end in time, and on a sink that does
 * not answer (its disk full) each of those waits out a request timeout. The marker is not
 * acked: the side hands it back once its pull has stopped (ctx.leave), so the next start or
 * the node that holds the role then gets it at once, or, when the sink does not answer, after
 * the ack wait; its fold is then skipped as done and the rest runs, as after a crash here.
 */
function leftForStop(
  ctx: { stopping?: AbortSignal | undefined; leave?: ((delivery: CommitDelivery) => void) | undefined },
  delivery: CommitDelivery,
  log: Logger,
): boolean {
  if (!ctx.stopping?.aborted) return false;
  log.info(
    "the catalog side is stopping: the rest of this epoch (checks, findings, ack) runs when its marker comes back",
  );
  ctx.leave?.(delivery);
  return true;
}

/** How long a stop waits for the sink to take a marker back before leaving it to the ack wait. */
const HAND_BACK_MS = 1_000;

/**
 * Hands back the marker of an epoch left for a stop, once the side's pull has stopped: the
 * next start, or the node that holds the role then, gets it at once, not after the ack wait
 * during which newer epochs queue behind it (and their checks are skipped as behind). When
 * the sink does not answer within HAND_BACK_MS, the stop goes on and the ack wait redelivers it.
 */
export async function handBackLeft(delivery: CommitDelivery | undefined, log: Logger): Promise<void> {
  if (!delivery) return;
  const at = log.child({ epoch: delivery.marker.epoch, seq: delivery.seq });
  try {
    await delivery.handBack(HAND_BACK_MS);
    at.info("the marker of the epoch left for the stop is handed back: the next catalog gets it at once");
  } catch (err) {
    at.warn(
      { err },
      "the sink did not take back the marker of the epoch left for the stop: it comes back after the ack wait",
    );
  }
}

/**
 * True for a marker handed out again (a crash, a stop or a lost role cut its epoch off) whose
 * epoch the findings baseline has not passed: its checks and transitions are still owed.
 */
function owed(delivery: CommitDelivery, tracker: FindingsTracker | undefined): boolean {
  if (delivery.deliveries < 2 || tracker === undefined) return false;
  const at = tracker.baselineEpoch();
  return at === undefined || parseEpoch(delivery.marker.epoch).getTime() >= at.getTime();
}

/** Every expected server answered in full, every check ran and every asset had a leader. */
function observedAll(checked: EpochCheckResult): boolean {
  const answered = new Set(checked.answered);
  return (
    checked.failed.length === 0 &&
    checked.leaderless.length === 0 &&
    checked.expected.every((server) => answered.has(server))
  );
}

/**
 * True when this node lost the catalog role while it folded the epoch (it stalled past its
 * claim's lapse, and another node took the role): the marker is then not acked, and nothing
 * published. Losing the role stops the side, which hands the marker back as a stop does
 * (ctx.leave), so the node holding the role now gets it at once, not after the ack wait.
 */
async function lostRole(
  ctx: {
    confirmRole: (() => Promise<boolean>) | undefined;
    leave?: ((delivery: CommitDelivery) => void) | undefined;
  },
  delivery: CommitDelivery,
  log: Logger,
) {
  if (!ctx.confirmRole || (await ctx.confirmRole())) return false;
  log.warn(
    "this node lost the catalog role while folding the epoch: nothing is published and the marker is handed back to the node holding the role now",
  );
  ctx.leave?.(delivery);
  return true;
}

/**
 * Writes the tracker's firing set to the catalog (hx.findings_firing), which the grades read:
 * held findings count there too. After each diff, and when the tracker starts.
 */
export async function recordFiring(catalog: Catalog, tracker: FindingsTracker): Promise<void> {
  const at = tracker.baselineEpoch();
  if (at) await writeFiringFindings(catalog, at, tracker.catalogFiring().values());
}

/**
 * Brings the notification outbox in line with the tracker's firing set (Notifier.syncFiring).
 * A failure is logged, not thrown: the epoch goes on, and the next start syncs again.
 */
export async function syncNotifications(
  notifier: Notifier,
  systemId: string,
  tracker: FindingsTracker,
  log: Logger,
): Promise<void> {
  const at = tracker.baselineEpoch();
  if (at === undefined) return;
  try {
    await notifier.syncFiring(systemId, at, tracker.firing());
  } catch (err) {
    log.error(
      { err },
      "the notification outbox could not be brought in line with the firing findings; endpoints learn of them at the next start or change",
    );
  }
}

/** Per-check times at debug, a summary with the slowest at info, each failing check at error. */
function logChecks(log: Logger, result: EpochCheckResult): void {
  for (const t of result.timings) log.debug({ code: t.code, ms: round(t.ms), rows: t.rows }, "check ran");
  for (const f of result.failed)
    log.error({ code: f.code, error: f.error }, "check failed; skipped for this epoch");
  const slowest = [...result.timings]
    .sort((a, b) => b.ms - a.ms)
    .slice(0, 3)
    .map((t) => `${t.code} ${round(t.ms)} ms`);
  log.info(
    { ms: round(result.ms), checks: result.timings.length, findings: result.findings.length, slowest },
    "checks ran",
  );
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

/**
 * The marker as folded: a server with a part the stream no longer holds counts as having
 * answered only part of the epoch (servers_partial), so the findings diff does not take the
 * absence of its rows for an answer and resolve its findings; they are held instead.
 */
function withMissingAsPartial(marker: CommitMarker, parts: readonly ScrapePart[]): CommitMarker {
  const missing = parts.filter((part) => "missing" in part).map((part) => part.server);
  if (missing.length === 0) return marker;
  return { ...marker, servers_partial: [...new Set([...(marker.servers_partial ?? []), ...missing])].sort() };
}

/** A part that cannot be read becomes an error reply, which the fold records in hx.epochs.errors. */
function errorEnvelope(description: string): unknown {
  return { error: { code: 0, description } };
}

function parseBody(text: string): unknown {
  try {
    return parseJsonExact(text);
  } catch {
    return errorEnvelope("scrape part is not valid JSON");
  }
}
