/**
 * What the catalog says when the scrape stream dropped commit markers before it read them:
 * those epochs are never folded. Each marker names the one written before it (prev_commit_seq,
 * commit_no: bus/commit-chain.ts); a marker whose predecessor this catalog's consumer never
 * handed out means the stream lost that one, and the numbers say how many. A scrape side that
 * was down wrote nothing, so nothing is missing from the chain and nothing is reported.
 */
import type { NatsConnection } from "@nats-io/nats-core";
import { commitMarkerAt, type CommitDelivery } from "../bus/index.ts";
import { foldedCommit, type Catalog } from "../catalog/index.ts";
import type { ScrapeStreamLimits, SystemConfig } from "../config/index.ts";
import type { Logger, NodeMetrics } from "../lib/index.ts";
import { systemAssets, type CommitMarker } from "../protocol/index.ts";
import { dropCause, limitSettings } from "./dropped-parts.ts";

/** The last marker the catalog's consumer handed out: its stream sequence, and its number and epoch when known. */
export interface ChainPoint {
  readonly seq: number;
  readonly no?: number | undefined;
  readonly epoch?: string | undefined;
}

/** Markers written after `after` and dropped before they were read; `count` undefined when not known (at least one). */
export interface MarkerLoss {
  readonly count: number | undefined;
  readonly after: ChainPoint;
  /** The newest of them: the marker this one names as its predecessor. */
  readonly lastLost: { readonly seq: number; readonly epoch: string | undefined };
}

/**
 * The markers lost between the last one handed out (`after`) and this one, at `seq`: its
 * predecessor is newer than `after` yet was never handed out. Nothing for a marker handed out
 * again (not past `after`), one without a predecessor (the chain's start, an older release),
 * or one whose predecessor is not below it (another stream's: the stream was created again).
 */
export function markerLoss(after: ChainPoint, seq: number, marker: CommitMarker): MarkerLoss | undefined {
  const prev = marker.prev_commit_seq;
  if (typeof prev !== "number" || seq <= after.seq || prev <= after.seq || prev >= seq) return undefined;
  const gap =
    typeof marker.commit_no === "number" && after.no !== undefined
      ? marker.commit_no - after.no - 1
      : undefined;
  return {
    count: gap !== undefined && gap >= 1 ? gap : undefined,
    after,
    lastLost: { seq: prev, epoch: marker.prev_epoch },
  };
}

/** The warning for markers the scrape stream dropped before the catalog read them. */
export function lostEpochsMessage(
  systemId: string,
  loss: MarkerLoss,
  next: { seq: number; epoch: string },
  limits: ScrapeStreamLimits,
  nowMs: number,
): string {
  const { count, after, lastLost } = loss;
  const how = count === undefined ? "At least one epoch" : count === 1 ? "1 epoch" : `${count} epochs`;
  const from = after.epoch ? `epoch ${after.epoch} (marker ${after.seq})` : `marker ${after.seq}`;
  const last = lastLost.epoch ? `epoch ${lastLost.epoch} (marker ${lastLost.seq})` : `marker ${lastLost.seq}`;
  const ageMs = nowMs - Date.parse(lastLost.epoch ?? next.epoch);
  return (
    `${how} of system ${systemId} will never be folded: the scrape stream ${systemAssets(systemId).scrapeStream} ` +
    `dropped ${count === 1 ? "its commit marker" : "their commit markers"} before the catalog read them, ` +
    `most likely at its limits, ${limitSettings(limits)}; ${dropCause(ageMs, limits)}. Lost: the epochs after ` +
    `${from}, the last folded or set aside, up to ${last}; the next epoch folded is ${next.epoch} (marker ${next.seq}). ` +
    "They are missing from hx.epochs and from every check over that time. If the catalog was behind (stopped, " +
    "restarting, slow), the limits must hold the scrapes of that long; the node holding the scrape side applies them at its start"
  );
}

/**
 * Follows the chain of markers as the catalog side's consumer hands them out, and logs (and
 * counts) each run of markers lost, from where the consumer stood when its pull began
 * (startingPoint).
 */
export function watchMarkerChain(options: {
  sink: NatsConnection;
  system: SystemConfig;
  log: Logger;
  metrics: NodeMetrics;
  now?: (() => number) | undefined;
}): {
  start(catalog: Catalog, ackedThrough: number): Promise<void>;
  /** An unreadable marker the consumer terminated: counted as set aside, and the chain goes on past it. */
  setAside(seq: number): void;
  seen(delivery: CommitDelivery): void;
} {
  const { log } = options;
  const systemId = options.system.id;
  const limits = options.system.scraper.stream;
  let after: ChainPoint | undefined;
  return {
    async start(catalog, ackedThrough) {
      const start = await startingPoint(options.sink, systemId, catalog, ackedThrough);
      after = start.point;
      const gap = start.elsewhere;
      if (gap) {
        log.info(
          { folded_elsewhere: gap.count ?? null, after_epoch: gap.after, through_epoch: gap.through },
          `${gap.count === undefined ? "Epochs" : gap.count === 1 ? "1 epoch" : `${gap.count} epochs`} of system ` +
            `${systemId} after ${gap.after}, up to ${gap.through}, were folded elsewhere: the scrape stream's ` +
            "consumer had them acknowledged (or set aside) by another process, a node that held this system's " +
            "catalog role meanwhile; this catalog file lacks them, and that node's has them",
        );
      }
    },
    setAside(seq) {
      options.metrics.markerSetAside(systemId, "unreadable");
      if (!after || seq > after.seq) after = { seq };
    },
    seen({ seq, marker }) {
      const loss = after && markerLoss(after, seq, marker);
      if (!after || seq > after.seq) after = { seq, no: marker.commit_no, epoch: marker.epoch };
      if (!loss) return;
      const nowMs = options.now?.() ?? Date.now();
      log.warn(
        {
          lost_epochs: loss.count ?? null,
          after_seq: loss.after.seq,
          after_epoch: loss.after.epoch,
          last_lost_seq: loss.lastLost.seq,
          last_lost_epoch: loss.lastLost.epoch,
          next_seq: seq,
          next_epoch: marker.epoch,
          max_bytes: limits.maxBytes,
          max_age_ms: limits.maxAgeMs,
        },
        lostEpochsMessage(systemId, loss, { seq, epoch: marker.epoch }, limits, nowMs),
      );
      options.metrics.markersLost(systemId, loss.count ?? 1);
    },
  };
}

/**
 * Where the chain stood when the consumer's pull began: the last marker acked or terminated
 * (its ack floor), with its number from the epoch folded from it, or from the marker itself
 * while the stream holds it (set aside, or folded by another catalog file). A marker the ack
 * floor passed that is in neither was handed out, left unfolded (a stop, a crash) and then
 * dropped by the stream, which moves the floor past it: lost too, so the chain starts at the
 * newest epoch this catalog folded. When the sink or the file does not answer, the ack floor
 * alone (a loss is then not counted, and none is invented). Undefined: the first marker handed
 * out starts the chain.
 */
async function startingPoint(
  sink: NatsConnection,
  systemId: string,
  catalog: Catalog,
  ackedThrough: number,
): Promise<{ point: ChainPoint | undefined; elsewhere?: FoldedElsewhere }> {
  try {
    if (ackedThrough === 0) {
      // A consumer that acked nothing yet: new, or made again (deleted by an operator, a sink
      // whose store was lost). A catalog that folded nothing had nothing to lose: its first
      // marker starts the chain. One that did goes on from the newest epoch it folded.
      const newest = await foldedCommit(catalog);
      return { point: newest && { seq: newest.seq, no: newest.commitNo, epoch: newest.epoch } };
    }
    const folded = await foldedCommit(catalog, ackedThrough);
    if (folded) return { point: { seq: ackedThrough, no: folded.commitNo, epoch: folded.epoch } };
    const marker = await commitMarkerAt(sink, systemId, ackedThrough);
    const newest = await foldedCommit(catalog);
    if (marker) {
      const point = { seq: ackedThrough, no: marker.commit_no, epoch: marker.epoch };
      // Acked past the newest epoch this file holds, by a process that was not this catalog.
      if (!newest || newest.seq >= ackedThrough) return { point };
      const count =
        typeof marker.commit_no === "number" && newest.commitNo !== undefined
          ? marker.commit_no - newest.commitNo
          : undefined;
      if (count !== undefined && count < 1) return { point };
      return { point, elsewhere: { count, after: newest.epoch, through: marker.epoch } };
    }
    if (newest && newest.seq < ackedThrough)
      return { point: { seq: newest.seq, no: newest.commitNo, epoch: newest.epoch } };
  } catch {
    // The sink or the file did not answer: the ack floor alone, as below.
  }
  return { point: ackedThrough > 0 ? { seq: ackedThrough } : undefined };
}

/** Epochs acked on the consumer past the newest this catalog file folded: another catalog's. */
interface FoldedElsewhere {
  readonly count: number | undefined;
  readonly after: string;
  readonly through: string;
}
