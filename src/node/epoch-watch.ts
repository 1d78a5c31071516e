import type { Logger } from "../lib/index.ts";

/** Intervals without an epoch before the catalog side says so. */
const QUIET_INTERVALS = 3;
/** How often the quiet is looked at, at most. */
const LOOK_EVERY_MS = 5_000;

/**
 * The catalog side's watch on its scraper: once no commit marker has come for three scrape
 * intervals, it logs a warning naming the likely cause (the scrape node stopped, or it
 * cannot write to the stream), once, and logs again when epochs come back. Nothing else
 * tells a catalog-only node's operator: no epoch means no checks, so no finding fires.
 */
export function startEpochWatch(options: {
  /** The scrape interval in force (the markers', else the node's own configuration). */
  intervalMs: () => number;
  log: Logger;
}): { seen(): void; stop(): void } {
  const { log } = options;
  let lastSeen = Date.now();
  let quietSince: number | undefined;
  const look = () => {
    const quietMs = Date.now() - lastSeen;
    const intervalMs = options.intervalMs();
    if (quietSince !== undefined || quietMs <= QUIET_INTERVALS * intervalMs) return;
    quietSince = lastSeen;
    log.warn(
      { quiet_ms: quietMs, scrape_interval_ms: intervalMs },
      `no epoch has come from the scraper for ${QUIET_INTERVALS} scrape intervals: is this system's scrape node ` +
        "running and able to write to the scrape stream? (`natsmon systems` lists the roles each node holds; " +
        "the scrape node's `ops.scraper.status` shows its last error)",
    );
  };
  const timer = setInterval(look, Math.min(LOOK_EVERY_MS, Math.max(100, options.intervalMs())));
  timer.unref();
  return {
    seen() {
      if (quietSince !== undefined) {
        log.info({ quiet_ms: Date.now() - quietSince }, "epochs come from the scraper again");
        quietSince = undefined;
      }
      lastSeen = Date.now();
    },
    stop() {
      clearInterval(timer);
    },
  };
}
