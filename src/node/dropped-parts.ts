/**
 * What the catalog says when a commit marker lists parts the scrape stream no longer holds:
 * the stream dropped them before the epoch was folded. Its limits (scraper.stream) are the
 * likely cause, and the message says which one and what to raise. Split from commit-handler.ts.
 */
import type { ScrapePart } from "../bus/index.ts";
import type { ScrapeStreamLimits } from "../config/index.ts";
import { systemAssets, type CommitMarker } from "../protocol/index.ts";

/** The text added to each dropped part's error in hx.epochs.errors. */
export const DROPPED_HINT =
  "dropped by the scrape stream before the fold: see scraper.stream.max-bytes and max-age";

/** The warning for an epoch some of whose parts were dropped, or undefined when none were. */
export function droppedPartsMessage(
  systemId: string,
  marker: CommitMarker,
  parts: readonly ScrapePart[],
  limits: ScrapeStreamLimits,
  nowMs: number,
): string | undefined {
  const dropped = parts.filter((part) => "missing" in part && part.dropped);
  if (dropped.length === 0) return undefined;
  const servers = [...new Set(dropped.map((part) => part.server))].sort();
  const settings = limitSettings(limits);
  const cause = dropCause(nowMs - Date.parse(marker.epoch), limits);
  return (
    `${dropped.length} of ${parts.length} parts of this epoch are no longer in the scrape stream ` +
    `${systemAssets(systemId).scrapeStream} (from ${servers.join(", ")}): it dropped them before the ` +
    `catalog folded the epoch, most likely at its limits, ${settings}; ${cause}. The epoch is folded ` +
    "with those servers partial (hx.epochs.servers_partial), and their findings are held. " +
    "If the catalog was behind (stopped, restarting, slow), the limits must hold the scrapes of that long; " +
    "the node holding the scrape side applies them at its start"
  );
}

/** The scrape stream's limits as this node's configuration (scraper.stream) sets them, for a warning. */
export function limitSettings(limits: ScrapeStreamLimits): string {
  const bytes = limits.maxBytes < 0 ? "no limit" : sizeText(limits.maxBytes);
  return (
    `max_bytes ${bytes} (scraper.stream.max-bytes) and max_age ${hoursText(limits.maxAgeMs)} ` +
    "(scraper.stream.max-age), as this node sets them"
  );
}

/**
 * Which limit explains the loss of an epoch's messages that old (ms), and what to raise: past
 * the max age, max-age; younger, max-bytes when there is one; else neither (a purge, a delete).
 */
export function dropCause(ageMs: number, limits: ScrapeStreamLimits): string {
  return ageMs >= limits.maxAgeMs
    ? `the epoch is ${hoursText(ageMs)} old, past the stream's max age: raise scraper.stream.max-age`
    : limits.maxBytes >= 0
      ? "the epoch is younger than the stream's max age, so its max bytes dropped them to make room " +
        "for newer scrapes: raise scraper.stream.max-bytes (about 13 to 21 KB per server per scrape on small servers; see the README)"
      : "neither limit explains it (no max bytes, and the epoch is younger than the max age): " +
        "the stream was purged or its messages deleted";
}

function sizeText(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${Number(value.toFixed(1))}${units[unit]}`;
}

function hoursText(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  if (minutes < 60) return minutes === 0 ? `${Math.round(ms / 1000)}s` : `${minutes}m`;
  return `${Math.floor(minutes / 60)}h${minutes % 60 === 0 ? "" : `${minutes % 60}m`}`;
}
