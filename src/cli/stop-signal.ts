import type { Logger } from "../lib/index.ts";

/**
 * Resolves on the first SIGINT, SIGTERM or SIGHUP, logged. From then on a second SIGINT or
 * SIGTERM, or a shutdown still running after `graceMs`, ends the process with exit code 1:
 * a stop must never hang, whatever the library still holds.
 */
export async function untilStopSignal(log: Logger, graceMs: number): Promise<NodeJS.Signals> {
  return catchStopSignal(log, graceMs).received;
}

export interface StopSignal {
  /** Aborts on the first SIGINT, SIGTERM or SIGHUP, for work still starting when it comes. */
  readonly signal: AbortSignal;
  /** Resolves with that first signal. */
  readonly received: Promise<NodeJS.Signals>;
}

/**
 * Catches the first SIGINT, SIGTERM or SIGHUP from now on, as untilStopSignal does, and also
 * aborts `signal` with it: a node still starting stops what it started instead of dying
 * mid-way.
 *
 * SIGHUP is what a node started in a terminal gets when the terminal closes; left to its
 * default it ends the process on the spot, catalog and embedded server unstopped. natsmon
 * reloads nothing on SIGHUP, so it is a stop. It often comes twice (the kernel sends it to
 * the terminal's foreground processes, the shell to its jobs), so a repeat never forces the
 * exit as a second Ctrl-C does, and it stays caught: uncaught, the repeat would kill the
 * process midway through its stop.
 */
export function catchStopSignal(log: Logger, graceMs: number): StopSignal {
  const stop = new AbortController();
  const received = new Promise<NodeJS.Signals>((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      if (stop.signal.aborted) return;
      log.info({ signal }, "stopping");
      const force = () => {
        log.error("shutdown did not finish in time; exiting");
        process.exit(1);
      };
      process.once("SIGINT", force);
      process.once("SIGTERM", force);
      setTimeout(force, graceMs).unref();
      stop.abort(new Error(`stopped by ${signal}`));
      resolve(signal);
    };
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
    process.on("SIGHUP", onSignal);
  });
  return { signal: stop.signal, received };
}

/** Exit codes of a command stopped by a signal, as a shell reports them (128 + its number). */
const SIGNAL_EXIT_CODES: Readonly<Record<string, number>> = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 };

/** A client command stopped by SIGINT, SIGTERM or SIGHUP; `exitCode` is the one a shell expects. */
export class Interrupted extends Error {
  readonly signal: NodeJS.Signals;
  readonly exitCode: number;
  constructor(signal: NodeJS.Signals) {
    super(`interrupted by ${signal}`);
    this.signal = signal;
    this.exitCode = SIGNAL_EXIT_CODES[signal] ?? 1;
  }
}

const INTERRUPTS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

export interface Interrupts extends Disposable {
  /** Aborts on the first SIGINT, SIGTERM or SIGHUP, its reason the Interrupted. */
  readonly signal: AbortSignal;
}

/**
 * Catches SIGINT, SIGTERM and SIGHUP (the terminal closed) while a client command works, so
 * that it can clean up (remove a temporary file) before it exits, instead of dying
 * mid-write. Every signal is caught until disposed, so a second Ctrl-C cannot cut the
 * clean-up short.
 */
export function catchInterrupts(): Interrupts {
  const stop = new AbortController();
  const onSignal = (received: NodeJS.Signals) => {
    if (!stop.signal.aborted) stop.abort(new Interrupted(received));
  };
  for (const signal of INTERRUPTS) process.on(signal, onSignal);
  return {
    signal: stop.signal,
    [Symbol.dispose]() {
      for (const signal of INTERRUPTS) process.off(signal, onSignal);
    },
  };
}

/** `promise`, or the signal's reason once it aborts first. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason as Error);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  return Promise.race([promise, aborted]).finally(() => {
    if (onAbort) signal.removeEventListener("abort", onAbort);
  });
}
