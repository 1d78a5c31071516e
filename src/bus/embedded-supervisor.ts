import { setTimeout as delay } from "node:timers/promises";
import type { Logger } from "../lib/index.ts";
import type { NatsServerExit, NatsServerProcess } from "./nats-server-process.ts";

/** The waits between failed starts of the server: 1 s, 2 s, 5 s, 10 s, then every 30 s. */
export const RETRY_DELAYS_MS: readonly number[] = [1_000, 2_000, 5_000, 10_000, 30_000];
/**
 * Failed starts in a row after which natsmon gives up and its node exits 1: ten, about three
 * minutes with the default waits, long enough for a port another process held for a moment
 * or a nats-server upgrade under way; after that, a service supervisor (systemd
 * Restart=on-failure) starting natsmon again is likelier to help than natsmon trying on.
 */
export const MAX_FAILED_STARTS = 10;
/** A server that exits within this long of its start counts as a failed start. */
const STABLE_MS = 60_000;

/** natsmon's last start of the server again: when, and why (how it exited, or restart()'s cause). */
export interface ServerRestart {
  readonly at: Date;
  readonly cause: string;
}

export interface ServerSupervisor {
  /** The server now: another one after each restart (the last one, dead, once given up). */
  readonly server: NatsServerProcess;
  /**
   * Kills the server (SIGKILL) and starts it again at once, naming `cause` in restartCause().
   * A start that fails is tried again in the background, as after an unexpected exit, and
   * rejects this promise with its error.
   */
  restart(cause: string): Promise<void>;
  /** When the server was last started again (by restart() or after it exited), if it was. */
  restartedAt(): Date | undefined;
  /** Why it was last started again, if it was. */
  restartCause(): string | undefined;
  /** When and why it was last started again, if it was. */
  lastRestart(): ServerRestart | undefined;
  /** Resolves, with why, once natsmon gives up starting the server again. */
  readonly gaveUp: Promise<string>;
  /** Stops supervising, then stops the server (SIGTERM, SIGKILL after 5 s) or kills it at once. */
  stop(how: "term" | "kill"): Promise<void>;
}

/**
 * Keeps natsmon's embedded nats-server running. The node cannot do anything without its bus
 * (no scrape, no fold, no API a client reaches), so a server that exits while natsmon did not
 * ask it to (not stopped, not restarted by `restart()`) is logged as an error naming its exit
 * code or signal, and started again with `start` (same port, store and credentials), at once.
 * A start that fails is logged with its cause and what to do, and tried again after
 * RETRY_DELAYS_MS; after `maxFailedStarts` failures in a row `gaveUp` resolves, so the node
 * exits 1, as the gateway does when it loses its bus for good.
 */
export function superviseServer(options: {
  server: NatsServerProcess;
  start: () => Promise<NatsServerProcess>;
  /** natsmon's log (the server's own lines go elsewhere). */
  log: Logger;
  retryDelaysMs?: readonly number[];
  maxFailedStarts?: number;
}): ServerSupervisor {
  const { start, log } = options;
  const delays = options.retryDelaysMs?.length ? options.retryDelaysMs : RETRY_DELAYS_MS;
  const maxFailedStarts = options.maxFailedStarts ?? MAX_FAILED_STARTS;
  let server = options.server;
  let startedAtMs = Date.now();
  let restartedAt: Date | undefined;
  let restartCause: string | undefined;
  let stopping = false;
  /** The server restart() kills: its exit is natsmon's doing. */
  let killed: NatsServerProcess | undefined;
  let failedStarts = 0;
  let reviving: Promise<void> | undefined;
  const pause = new AbortController();
  let giveUp: (reason: string) => void = () => {};
  const gaveUp = new Promise<string>((resolve) => (giveUp = resolve));
  const waitAfter = (failures: number) => delays[Math.min(failures, delays.length) - 1] ?? 0;

  /** Starts the server; undefined when it runs (or natsmon stops meanwhile), else the error. */
  const tryStart = async (cause: string): Promise<Error | undefined> => {
    let next: NatsServerProcess;
    try {
      next = await start();
    } catch (err) {
      return err instanceof Error ? err : new Error(String(err));
    }
    if (stopping) {
      await next.stop();
      return undefined;
    }
    server = next;
    startedAtMs = Date.now();
    restartedAt = new Date();
    restartCause = cause;
    watch(next);
    return undefined;
  };

  /** Logs a failed start; the wait before the next try, or undefined once natsmon gives up. */
  const failed = (err: Error): number | undefined => {
    failedStarts += 1;
    const fields = { err, failed_starts: failedStarts };
    if (failedStarts >= maxFailedStarts) {
      const reason =
        `the embedded nats-server did not start again ${failedStarts} times in a row (last: ${err.message}); ` +
        "natsmon exits with code 1 so that a service supervisor (systemd Restart=on-failure) starts it " +
        "again; started by hand, start it again once the cause is fixed";
      log.fatal(fields, reason);
      giveUp(reason);
      return undefined;
    }
    const waitMs = waitAfter(failedStarts);
    log.error(
      { ...fields, retry_in_ms: waitMs },
      `the embedded nats-server did not start again: ${err.message}. ${remedy(err)}natsmon tries again in ` +
        `${waitMs / 1000} s (failed start ${failedStarts} of ${maxFailedStarts} before it exits); until then this ` +
        "node has no bus: it scrapes, folds and answers nothing",
    );
    return waitMs;
  };

  const keepTrying = async (cause: string, firstWaitMs: number): Promise<void> => {
    let waitMs = firstWaitMs;
    for (;;) {
      if (waitMs > 0) await sleep(waitMs, pause.signal);
      if (stopping) return;
      const err = await tryStart(cause);
      if (!err) {
        if (!stopping)
          log.info({ pid: server.pid }, "the embedded nats-server runs again; natsmon reconnects to it");
        return;
      }
      const next = failed(err);
      if (next === undefined) return;
      waitMs = next;
    }
  };

  const revive = (cause: string, firstWaitMs: number) => {
    reviving = keepTrying(cause, firstWaitMs).finally(() => (reviving = undefined));
  };

  const watch = (watched: NatsServerProcess) => {
    void watched.exit.then((exit) => {
      if (stopping || watched !== server || watched === killed) return;
      // One that dies again soon after each start is not restarted at full speed for ever.
      failedStarts = Date.now() - startedAtMs < STABLE_MS ? failedStarts + 1 : 0;
      const how = describeExit(exit);
      log.error(
        { pid: watched.pid, code: exit.code, signal: exit.signal },
        `the embedded nats-server (pid ${watched.pid}) exited unexpectedly (${how}); natsmon restarts it on the ` +
          "same port, store and credentials",
      );
      if (failedStarts >= maxFailedStarts) {
        failed(new Error(`it exited (${how}) within ${STABLE_MS / 1000} s of each start`));
        return;
      }
      revive(`it exited unexpectedly (${how})`, failedStarts > 0 ? waitAfter(failedStarts) : 0);
    });
  };
  watch(server);

  return {
    get server() {
      return server;
    },
    async restart(cause) {
      if (stopping) return;
      if (reviving) throw new Error("the embedded nats-server is already being started again");
      killed = server;
      server.kill("SIGKILL");
      await server.exit;
      const err = await tryStart(cause);
      if (!err) return;
      const waitMs = failed(err);
      if (waitMs !== undefined) revive(cause, waitMs);
      throw err;
    },
    restartedAt: () => restartedAt,
    restartCause: () => restartCause,
    lastRestart: () => (restartedAt && restartCause ? { at: restartedAt, cause: restartCause } : undefined),
    gaveUp,
    async stop(how) {
      stopping = true;
      pause.abort();
      // A start under way finishes first; tryStart stops what it started.
      await reviving;
      if (how === "term") return server.stop();
      server.kill("SIGKILL");
      await server.exit;
    },
  };
}

function describeExit(exit: NatsServerExit): string {
  return exit.signal ? `killed by ${exit.signal}` : `exit code ${exit.code}`;
}

/** What an operator can do about a start that failed. */
function remedy(err: Error): string {
  if (/address already in use/.test(err.message)) {
    return "Another process listens on its port now: stop it, and natsmon takes the port back at its next try. ";
  }
  if (/nats-server was not found/.test(err.message)) return "";
  return (
    "nats-server's own output, if it wrote any, ends that message; a nats-server binary removed or replaced " +
    "by an upgrade, or a full data dir, are the usual causes. "
  );
}

/** Waits `ms`, or less once `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return delay(ms, undefined, { signal }).catch(() => undefined);
}
