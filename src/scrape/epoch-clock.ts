/**
 * Epoch names that move forward. An epoch is named by the scrape host's wall clock, and the
 * catalog orders epochs by name: an epoch named before the last one (a clock stepped back by
 * NTP or by hand, or a scrape node taking over on a host whose clock is behind) would be held
 * back by the findings baseline, and no transition would be published for it.
 */
import { EPOCH_CLOCK_TOLERANCE_MS } from "../domain/index.ts";
import type { Logger } from "../lib/index.ts";

/** What the wall clock did, seen while naming an epoch; none when it simply moved on. */
export type ClockEvent =
  /**
   * The wall clock moved apart from the time elapsed since the last epoch (an NTP step, or
   * the clock set by hand) by `stepMs` (negative: back); epochs still follow it.
   */
  | { readonly kind: "stepped"; readonly stepMs: number }
  /**
   * The wall clock is behind the last epoch by `behindMs`, at most the tolerance: epochs are
   * named 1 ms after the last one until the clock passes it. `stepMs` when this process saw it step.
   */
  | { readonly kind: "behind"; readonly behindMs: number; readonly lastEpoch: Date; readonly stepMs?: number }
  /** The wall clock passed the last epoch again: epochs are named by it again. */
  | { readonly kind: "caught-up" }
  /**
   * The last epoch is further ahead of the wall clock than the tolerance: it was named by a
   * clock that was wrong, and following it would name every epoch wrong for as long. The
   * wall clock names the epoch.
   */
  | { readonly kind: "far-behind"; readonly behindMs: number; readonly lastEpoch: Date };

export interface EpochNaming {
  readonly epoch: Date;
  readonly event?: ClockEvent;
}

/**
 * A step of the wall clock against the monotonic clock that goes unremarked: NTP corrections
 * under a second are routine (ntpd steps at 128 ms), and slewing moves the wall clock by up
 * to 500 ppm of the time elapsed, allowed for twice over.
 */
function unremarkableStepMs(elapsedMs: number): number {
  return 1_000 + elapsedMs / 1_000;
}

/**
 * Names the epochs of one scraper. `last` is the last epoch committed before this process
 * (the scrape stream's last commit marker), which may have been named on another host.
 */
export class EpochClock {
  readonly #now: () => Date;
  readonly #monotonicMs: () => number;
  #lastMs: number | undefined;
  /** The wall and monotonic clocks when the last epoch was named by this process. */
  #reading: { wallMs: number; monoMs: number } | undefined;
  /** Epochs are named after the last one because the wall clock is behind it. */
  #following = false;

  constructor(now: () => Date, monotonicMs: () => number, last?: Date) {
    this.#now = now;
    this.#monotonicMs = monotonicMs;
    if (last && !Number.isNaN(last.getTime())) this.#lastMs = last.getTime();
  }

  /** The next epoch's name: the wall clock, unless that would not be after the last epoch. */
  next(): EpochNaming {
    const wallMs = this.#now().getTime();
    const monoMs = this.#monotonicMs();
    let stepMs: number | undefined;
    if (this.#reading) {
      const elapsedMs = monoMs - this.#reading.monoMs;
      const step = wallMs - (this.#reading.wallMs + elapsedMs);
      if (Math.abs(step) > unremarkableStepMs(elapsedMs)) stepMs = Math.round(step);
    }
    this.#reading = { wallMs, monoMs };
    const lastMs = this.#lastMs;
    let epochMs = wallMs;
    let event: ClockEvent | undefined;
    if (lastMs !== undefined && wallMs <= lastMs) {
      const behindMs = lastMs - wallMs;
      if (behindMs <= EPOCH_CLOCK_TOLERANCE_MS) {
        epochMs = lastMs + 1;
        // Said once, when it starts; two epochs in one millisecond are no clock problem.
        if (!this.#following && (behindMs > 0 || stepMs !== undefined)) {
          event = {
            kind: "behind",
            behindMs,
            lastEpoch: new Date(lastMs),
            ...(stepMs !== undefined ? { stepMs } : {}),
          };
        }
        this.#following = behindMs > 0 || this.#following;
      } else {
        event = { kind: "far-behind", behindMs, lastEpoch: new Date(lastMs) };
        this.#following = false;
      }
    } else if (this.#following) {
      event = { kind: "caught-up" };
      this.#following = false;
    } else if (stepMs !== undefined) {
      event = { kind: "stepped", stepMs };
    }
    this.#lastMs = epochMs;
    const epoch = new Date(epochMs);
    return event ? { epoch, event } : { epoch };
  }
}

const TOLERANCE = `${EPOCH_CLOCK_TOLERANCE_MS / 60_000} minutes`;
const CHECK_CLOCKS =
  "check that the scrape and catalog hosts keep time with NTP (`timedatectl`, `chronyc tracking` " +
  "or `ntpq -p`), and that nothing else sets their clocks";

/** Logs what the wall clock did, saying what it means for the epochs and what to check. */
export function logClockEvent(log: Logger, naming: EpochNaming): EpochNaming {
  logEvent(log, naming);
  return naming;
}

function logEvent(log: Logger, naming: EpochNaming): void {
  const { event } = naming;
  if (!event) return;
  const epoch = naming.epoch.toISOString();
  switch (event.kind) {
    case "stepped":
      log.warn(
        { epoch, step_ms: event.stepMs },
        `the wall clock stepped ${seconds(event.stepMs)} ${event.stepMs < 0 ? "back" : "forward"} ` +
          "since the last epoch (an NTP step correction, or the clock set by hand); epochs still move " +
          `forward and are named by it. If it is now wrong, ${CHECK_CLOCKS}` +
          (event.stepMs > 0
            ? `; a catalog sets aside an epoch named more than ${TOLERANCE} ahead of both its own clock and the sink's`
            : ""),
      );
      return;
    case "behind":
      log.warn(
        {
          epoch,
          last_epoch: event.lastEpoch.toISOString(),
          behind_ms: event.behindMs,
          ...(event.stepMs !== undefined ? { step_ms: event.stepMs } : {}),
        },
        `the wall clock is ${seconds(event.behindMs)} behind the last epoch ` +
          (event.stepMs !== undefined
            ? `(it stepped ${seconds(event.stepMs)} back: an NTP step correction, or the clock set by hand)`
            : "(named before this process started, by this host before its clock was set back or by another scrape host whose clock is ahead)") +
          ": epochs are named 1 ms after the last one until the clock passes it, so they stay in order " +
          `and findings keep being diffed; ${CHECK_CLOCKS}`,
      );
      return;
    case "caught-up":
      log.info({ epoch }, "the wall clock has passed the last epoch: epochs are named by it again");
      return;
    case "far-behind":
      log.error(
        { epoch, last_epoch: event.lastEpoch.toISOString(), behind_ms: event.behindMs },
        `the last epoch is ${seconds(event.behindMs)} ahead of this host's clock, more than the ${TOLERANCE} ` +
          "natsmon follows: it was named by a clock that was ahead (this host's before it was set back, or " +
          "another scrape host's), and a catalog sets such an epoch aside. Epochs are named by this host's " +
          `clock; ${CHECK_CLOCKS}`,
      );
      return;
  }
}

function seconds(ms: number): string {
  const s = Math.abs(ms) / 1000;
  return s >= 100 ? `${Math.round(s)} s` : `${s.toFixed(1)} s`;
}
