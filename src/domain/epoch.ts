/** An epoch is one complete scrape of one system, named by its start time. */
export type Epoch = Date;

/** RFC 3339 with millisecond precision, the wire form of an epoch. */
export function formatEpoch(epoch: Epoch): string {
  return epoch.toISOString();
}

export function parseEpoch(text: string): Epoch {
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) throw new TypeError(`not an RFC 3339 timestamp: ${text}`);
  return date;
}

/**
 * How far the clocks of a scrape host and a catalog host may disagree before an epoch's name
 * is not believed. An epoch is named at the start of its scrape and folded after it, so on
 * clocks that agree it is never ahead of the catalog's; NTP keeps hosts within milliseconds
 * of each other. Five minutes is far past any disagreement NTP leaves, and short enough that
 * an epoch named by a clock that jumped an hour ahead is caught.
 * The catalog sets aside a commit marker whose epoch is further than this ahead of its own
 * clock, the findings tracker does not let a baseline that far ahead hold back epochs, and a
 * scraper whose clock is behind the last committed epoch by at most this keeps naming
 * epochs after it (further behind, that epoch was named by a wrong clock and is not followed).
 */
export const EPOCH_CLOCK_TOLERANCE_MS = 5 * 60_000;
