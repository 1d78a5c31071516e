/**
 * ③ A commit marker whose epoch is named far ahead of the catalog node's clock and of the sink
 * server's clock when it stored the marker: a scrape host whose clock is wrong. Folded, it would be the catalog's latest epoch (`max(epoch)`, the
 * checks' windows, retention) and the findings baseline, and every real epoch after it would
 * be older than that baseline, its findings not diffed, until the clocks passed it: one bad
 * epoch would silence the finding feed for as long as the clock was ahead. It is set aside
 * instead, as an unreadable marker is (terminated, never redelivered, so nothing waits behind
 * it), logged as an error naming the clocks, and counted in
 * natsmon_commit_markers_set_aside_total{reason="future-epoch"}.
 */
import type { CommitDelivery } from "../bus/index.ts";
import { EPOCH_CLOCK_TOLERANCE_MS } from "../domain/index.ts";
import type { Logger, NodeMetrics } from "../lib/index.ts";

/** How far the epoch is ahead of `nowMs`, when that is more than the tolerance; else undefined. */
export function epochAheadMs(epoch: string, nowMs: number): number | undefined {
  const ahead = Date.parse(epoch) - nowMs;
  return ahead > EPOCH_CLOCK_TOLERANCE_MS ? ahead : undefined;
}

/** True when the marker was set aside for its future epoch: the caller folds nothing of it. */
export function setAsideFutureEpoch(
  delivery: CommitDelivery,
  ctx: { systemId: string; metrics: NodeMetrics; log: Logger; now?: () => number },
): boolean {
  const now = ctx.now?.() ?? Date.now();
  const { marker } = delivery;
  // Ahead of both this node's clock and the sink server's when it stored the marker: one
  // wrong clock there (a catalog or sink host behind) must not make every epoch look ahead.
  const aheadMs = epochAheadMs(marker.epoch, Math.max(now, delivery.storedAt.getTime()));
  if (aheadMs === undefined) return false;
  ctx.log.error(
    {
      epoch: marker.epoch,
      seq: delivery.seq,
      ahead_ms: aheadMs,
      catalog_clock: new Date(now).toISOString(),
      finished_at: marker.finished_at,
      stored_at: delivery.storedAt.toISOString(),
    },
    `commit marker set aside, not folded: its epoch is ${Math.round(aheadMs / 1000)} s ahead of both this catalog ` +
      `node's clock and the sink server's when it stored the marker (stored_at), more than ` +
      `${EPOCH_CLOCK_TOLERANCE_MS / 60_000} minutes, so the scrape host that named it has a clock that is ahead. ` +
      "Folded, it would become the latest epoch and hold back the findings of every epoch " +
      "after it until the clocks pass it. This epoch's scrape is dropped; check that the scrape and catalog " +
      "hosts keep time with NTP (`timedatectl`, `chronyc tracking`)",
  );
  ctx.metrics.markerSetAside(ctx.systemId, "future-epoch");
  delivery.term();
  return true;
}
