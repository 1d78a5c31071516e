import type { ServerRestart } from "../bus/index.ts";
import type { Logger } from "../lib/index.ts";

/** Intervals without an epoch before the catalog side says so. */
const QUIET_INTERVALS = 3;
/** How often the quiet is looked at, at most. */
const LOOK_EVERY_MS = 5_000;

/** Where the system's commit markers stand on the sink (bus/commitProgress). */
export interface CommitProgress {
  /** Stream sequence of the last commit marker written. */
  readonly lastCommitSeq: number;
  /** Stream sequence of the last marker the catalog consumer handed out, to anyone. */
  readonly deliveredSeq: number;
  /** Stream sequence of the first marker written after the one asked from (`progress(after)`); 0: none. */
  readonly nextCommitSeq: number;
  /** Markers handed out and not yet acknowledged (the consumer hands out one at a time). */
  readonly ackPending?: number;
  /** The consumer's ack wait: when a marker handed out and never acknowledged is handed out again. */
  readonly ackWaitMs?: number;
}

/**
 * Why no epoch reaches the catalog:
 * - `no-commits`: no marker was written since the last one it saw; the scraper is quiet.
 * - `taken-elsewhere`: the consumer handed out markers this catalog never got, so another
 *   process pulls from it (a second catalog node for the system); newer markers may wait
 *   behind one that process holds, as the scraper goes on writing.
 * - `awaiting-redelivery`: markers wait behind one the consumer handed out and nobody
 *   acknowledged: held by this catalog's earlier run, stopped without acking it (killed, or
 *   crashed); the consumer hands it out again after its ack wait, and the others after it.
 * - `undelivered`: markers wait in the stream and the consumer handed out none of them.
 * - `sink-restarted`: natsmon restarted its embedded sink since the last new marker came; the
 *   scraper and the consumer come back on it (what the consumer does meanwhile, redelivering
 *   and skipping, says nothing of anyone else).
 */
export type QuietCause =
  "no-commits" | "taken-elsewhere" | "awaiting-redelivery" | "undelivered" | "sink-restarted";

/**
 * Decides the cause from the sequence of the last marker this catalog got (`seenSeq`), what
 * the consumer had handed out when the watch started (`deliveredAtStart`: its earlier run's
 * markers are no sign of anyone) and where the markers stand now (`nextCommitSeq` read from
 * the later of the two). Only a marker counts: the consumer's delivered sequence also moves
 * past the parts it skips (it takes commit markers only), so a scraper midway through an
 * epoch is no sign of another process; a marker up to the delivered sequence that this
 * catalog never got is, whether or not newer ones wait behind it.
 */
export function quietCause(
  seenSeq: number,
  deliveredAtStart: number,
  now: CommitProgress,
  sinkRestarted = false,
): QuietCause {
  if (sinkRestarted) return "sink-restarted";
  const from = Math.max(seenSeq, deliveredAtStart);
  if (now.lastCommitSeq <= from) return "no-commits";
  // Markers are handed out in order: whether the first one after `from` was tells.
  const handedOut = now.nextCommitSeq > from && now.nextCommitSeq <= now.deliveredSeq;
  if (handedOut) return "taken-elsewhere";
  // None handed out since the watch started, and one of before is still unacknowledged.
  return (now.ackPending ?? 0) > 0 && seenSeq < deliveredAtStart ? "awaiting-redelivery" : "undelivered";
}

const SCRAPER_QUIET =
  `no epoch has come from the scraper for ${QUIET_INTERVALS} scrape intervals: is this system's scrape node ` +
  "running and able to write to the scrape stream? (`natsmon systems` lists the roles each node holds; " +
  "the scrape node's `ops.scraper.status` shows its last error)";

const MESSAGES: Record<Exclude<QuietCause, "sink-restarted" | "awaiting-redelivery">, string> = {
  "no-commits": SCRAPER_QUIET,
  "taken-elsewhere":
    `no epoch has reached this catalog for ${QUIET_INTERVALS} scrape intervals, yet the scraper writes them: ` +
    "its consumer of the scrape stream handed them to another process. A second catalog node for this system " +
    "(one of a natsmon release without role claims) or another client pulls from that consumer, and each " +
    "misses the other's epochs: stop it (`natsmon systems` lists the nodes and their roles)",
  undelivered:
    `no epoch has reached this catalog for ${QUIET_INTERVALS} scrape intervals, though the scrape stream holds ` +
    "newer ones: its consumer delivers none (the sink's JetStream; `ops.sink.info` shows the stream's state)",
};

function message(cause: QuietCause, restart: ServerRestart | undefined, ackWaitMs?: number): string {
  if (cause === "awaiting-redelivery") {
    return (
      `no epoch has reached this catalog for ${QUIET_INTERVALS} scrape intervals: the scrape stream's consumer ` +
      "handed a commit marker, before this run started, to a catalog that has not acknowledged it (this " +
      "catalog's earlier run, stopped without acking it: killed, or crashed), and hands out the next ones only " +
      "after it; it hands that marker out again once its ack wait " +
      `(${ackWaitMs === undefined ? "the consumer's ack_wait" : `${Math.round(ackWaitMs / 1000)} s`}) has passed, ` +
      "and the epochs behind it follow. Nothing to do unless this goes on past that (then `natsmon systems`: is " +
      "another node pulling for this system?)"
    );
  }
  if (cause !== "sink-restarted") return MESSAGES[cause];
  return (
    `the embedded bus was restarted at ${restart?.at.toISOString()} (natsmon restarted its nats-server: ` +
    `${restart?.cause}), ` +
    `and no new epoch has reached this catalog since, for ${QUIET_INTERVALS} scrape intervals: the scraper and ` +
    "this catalog's consumer resume once they have reconnected to it (the scrape node's `ops.scraper.status` " +
    "shows its last error)"
  );
}

const PROGRESS_UNKNOWN =
  `no epoch has reached this catalog for ${QUIET_INTERVALS} scrape intervals, and where the commit markers ` +
  "stand could not be read from the sink, so whether the scraper is quiet or the consumer delivers none is " +
  "unknown: check the sink's JetStream (`nats stream info` on the scrape stream, the sink servers' logs)";

/**
 * The catalog side's watch on its epochs: once no commit marker has come for three scrape
 * intervals, it logs a warning naming the likely cause (the scraper quiet, the markers taken
 * by another process pulling from the same consumer, or the consumer stuck), once, and logs
 * again when epochs come back. Nothing else tells a catalog-only node's operator: no epoch
 * means no checks, so no finding fires. A marker being folded is not quiet.
 */
export function startEpochWatch(options: {
  /** The scrape interval in force (the markers', else the node's own configuration). */
  intervalMs: () => number;
  /**
   * Where the markers stand on the sink, with the first marker after stream sequence `after`;
   * rejects when the sink does not say.
   */
  progress: (after: number) => Promise<CommitProgress>;
  /** When and why natsmon last restarted its embedded sink (EmbeddedSink.lastRestart), if it did. */
  sinkRestart?: () => ServerRestart | undefined;
  log: Logger;
}): { seen(seq: number): void; folded(): void; stop(): Promise<void> } {
  const { log } = options;
  let lastSeen = Date.now();
  let seenSeq = 0;
  /** When a marker beyond those seen before came: a redelivered one is no news. */
  let newAt = Date.now();
  let folding = false;
  let quietSince: number | undefined;
  let looking: Promise<void> = Promise.resolve();
  const progressNow = (after = 0) =>
    options.progress(after).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))));
  /**
   * What the consumer had handed out when the watch started. When the sink did not say then,
   * the first figures read later stand for it: markers handed out before are not blamed on
   * another process, as a 0 would.
   */
  let deliveredAtStart: number | undefined;
  const atStart = progressNow().then((p) => {
    if (!(p instanceof Error)) deliveredAtStart = p.deliveredSeq;
  });
  const look = async () => {
    const quietMs = Date.now() - lastSeen;
    const intervalMs = options.intervalMs();
    if (folding || quietSince !== undefined || quietMs <= QUIET_INTERVALS * intervalMs) return;
    quietSince = lastSeen;
    await atStart;
    const now = await progressNow(Math.max(seenSeq, deliveredAtStart ?? 0));
    const restart = options.sinkRestart?.();
    const restarted = restart !== undefined && restart.at.getTime() >= newAt;
    const fields = {
      quiet_ms: quietMs,
      scrape_interval_ms: intervalMs,
      seen_seq: seenSeq,
      ...(restarted ? { restart_cause: restart.cause } : {}),
    };
    if (now instanceof Error) {
      if (restarted) log.warn({ ...fields, cause: "sink-restarted" }, message("sink-restarted", restart));
      else log.warn({ ...fields, cause: "unknown", error: now.message }, PROGRESS_UNKNOWN);
      return;
    }
    deliveredAtStart ??= now.deliveredSeq;
    const cause = quietCause(seenSeq, deliveredAtStart, now, restarted);
    log.warn(
      { ...fields, cause, last_commit_seq: now.lastCommitSeq, delivered_seq: now.deliveredSeq },
      message(cause, restart, now.ackWaitMs),
    );
  };
  const timer = setInterval(
    () => {
      looking = looking.then(look);
    },
    Math.min(LOOK_EVERY_MS, Math.max(100, options.intervalMs())),
  );
  timer.unref();
  return {
    seen(seq) {
      if (quietSince !== undefined) {
        log.info({ quiet_ms: Date.now() - quietSince }, "epochs come from the scraper again");
        quietSince = undefined;
      }
      folding = true;
      if (seq > seenSeq) newAt = Date.now();
      seenSeq = Math.max(seenSeq, seq);
      lastSeen = Date.now();
    },
    folded() {
      folding = false;
      lastSeen = Date.now();
    },
    async stop() {
      clearInterval(timer);
      await atStart;
      await looking;
    },
  };
}
