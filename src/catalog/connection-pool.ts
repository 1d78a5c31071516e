/**
 * A fixed set of connections lent out one holder at a time: a semaphore whose permits are
 * the connections. Waiters queue in arrival order and may give up through an AbortSignal.
 * Closing refuses new and waiting borrowers, optionally interrupts the ones running, and
 * closes the connections once all are back (closing one mid-query is not safe).
 */
import type { DuckDBConnection } from "@duckdb/node-api";

const INTERRUPT_REPEAT_MS = 50;

/** A pool's state at one moment. */
export interface PoolStats {
  readonly size: number;
  readonly busy: number;
  readonly waiting: number;
}

interface Waiter {
  readonly resolve: (con: DuckDBConnection) => void;
  readonly reject: (err: unknown) => void;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: () => void;
}

export class ConnectionPool {
  private readonly connections: readonly DuckDBConnection[];
  private readonly free: DuckDBConnection[];
  private readonly busy = new Set<DuckDBConnection>();
  private readonly waiters: Waiter[] = [];
  private closeReason: (() => Error) | undefined;
  private allBack: (() => void) | undefined;

  constructor(connections: readonly DuckDBConnection[]) {
    this.connections = connections;
    this.free = [...connections];
  }

  get closing(): boolean {
    return this.closeReason !== undefined;
  }

  get size(): number {
    return this.connections.length;
  }

  stats(): PoolStats {
    return { size: this.connections.length, busy: this.busy.size, waiting: this.waiters.length };
  }

  /** Runs `fn` with a connection of its own; waits for one when all are lent out. */
  async use<T>(fn: (con: DuckDBConnection) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const con = await this.acquire(signal);
    try {
      return await fn(con);
    } finally {
      this.release(con);
    }
  }

  private acquire(signal: AbortSignal | undefined): Promise<DuckDBConnection> {
    if (this.closeReason) return Promise.reject(this.closeReason());
    if (signal?.aborted) return Promise.reject(abortError(signal));
    const con = this.free.pop();
    if (con) {
      this.busy.add(con);
      return Promise.resolve(con);
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        signal,
        onAbort: () => {
          const i = this.waiters.indexOf(waiter);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(abortError(signal));
        },
      };
      signal?.addEventListener("abort", waiter.onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  private release(con: DuckDBConnection): void {
    const next = this.waiters.shift();
    if (next) {
      next.signal?.removeEventListener("abort", next.onAbort);
      next.resolve(con);
      return;
    }
    this.busy.delete(con);
    this.free.push(con);
    if (this.busy.size === 0) this.allBack?.();
  }

  /**
   * Refuses new borrowers with `reason()`, interrupts running work when `interrupt` is set
   * (holders then see their statement fail and can check `closing`), waits for every
   * connection to come back, then closes them all.
   */
  async close(reason: () => Error, interrupt: boolean): Promise<void> {
    if (this.closeReason) return;
    this.closeReason = reason;
    for (const waiter of this.waiters.splice(0)) {
      waiter.signal?.removeEventListener("abort", waiter.onAbort);
      waiter.reject(reason());
    }
    if (this.busy.size > 0) {
      const back = new Promise<void>((resolve) => (this.allBack = resolve));
      // An interrupt reaches only a statement already running; a holder between two
      // statements would miss a single one, so keep interrupting until all are back.
      const interruptAll = () => this.busy.forEach((con) => con.interrupt());
      const repeat = interrupt ? setInterval(interruptAll, INTERRUPT_REPEAT_MS) : undefined;
      if (interrupt) interruptAll();
      await back;
      clearInterval(repeat);
    }
    for (const con of this.connections) con.closeSync();
  }
}

function abortError(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new Error("gave up waiting for a connection");
}
