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
}

/**
 * Why no epoch reaches the catalog:
 * - `no-commits`: no marker was written since the last one it saw; the scraper is quiet.
 * - `taken-elsewhere`: the consumer handed out markers this catalog never got, so another
 *   process pulls from it (a second catalog node for the system).
 * - `undelivered`: markers wait in the stream and the consumer hands out none.
 */
export type QuietCause = "no-commits" | "taken-elsewhere" | "undelivered";

/**
 * Decides the cause from the sequence of the last marker this catalog got (`seenSeq`), what
 * the consumer had handed out when the watch started (`deliveredAtStart`: its earlier run's
 * markers are no sign of anyone) and where the markers stand now. Only a marker counts: the
 * consumer's delivered sequence also moves past the parts it skips (it takes commit markers
 * only), so a scraper midway through an epoch is no sign of another process.
 */
export function quietCause(seenSeq: number, deliveredAtStart: number, now: CommitProgress): QuietCause {
  if (now.lastCommitSeq <= Math.max(seenSeq, deliveredAtStart)) return "no-commits";
  return now.deliveredSeq >= now.lastCommitSeq ? "taken-elsewhere" : "undelivered";
}

const SCRAPER_QUIET =
  `no epoch has come from the scraper for ${QUIET_INTERVALS} scrape intervals: is this system's scrape node ` +
  "running and able to write to the scrape stream? (`natsmon systems` lists the roles each node holds; " +
  "the scrape node's `ops.scraper.status` shows its last error)";

const MESSAGES: Record<QuietCause, string> = {
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
  /** Where the markers stand on the sink; the scraper is blamed when it cannot be read. */
  progress: () => Promise<CommitProgress>;
  log: Logger;
}): { seen(seq: number): void; folded(): void; stop(): Promise<void> } {
  const { log } = options;
  let lastSeen = Date.now();
  let seenSeq = 0;
  let folding = false;
  let quietSince: number | undefined;
  let looking: Promise<void> = Promise.resolve();
  const progressNow = () => options.progress().catch(() => undefined);
  const atStart = progressNow();
  const look = async () => {
    const quietMs = Date.now() - lastSeen;
    const intervalMs = options.intervalMs();
    if (folding || quietSince !== undefined || quietMs <= QUIET_INTERVALS * intervalMs) return;
    quietSince = lastSeen;
    const [start, now] = [await atStart, await progressNow()];
    const cause = now ? quietCause(seenSeq, start?.deliveredSeq ?? 0, now) : "no-commits";
    log.warn(
      {
        quiet_ms: quietMs,
        scrape_interval_ms: intervalMs,
        cause,
        seen_seq: seenSeq,
        ...(now ? { last_commit_seq: now.lastCommitSeq, delivered_seq: now.deliveredSeq } : {}),
      },
      MESSAGES[cause],
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
