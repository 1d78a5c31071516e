/**
 * Stopping the DuckDB work of one client request on its connection. DuckDB's interrupt
 * reaches the call the connection is running, a prepare (which folds constant expressions,
 * at any cost) as much as a query, but one landing between two calls is lost. So once
 * started, the interrupt is sent again every 50 ms until the holder stops it.
 */
import type { DuckDBConnection } from "@duckdb/node-api";
import { BadRequestError, MonError } from "../domain/index.ts";

const INTERRUPT_REPEAT_MS = 50;

export class ConnectionInterrupter {
  private readonly con: DuckDBConnection;
  private readonly signal: AbortSignal | undefined;
  private repeat: ReturnType<typeof setInterval> | undefined;
  private readonly onAbort = () => this.start();

  /** Starts interrupting when `signal` aborts: at once if it has aborted already. */
  constructor(con: DuckDBConnection, signal?: AbortSignal) {
    this.con = con;
    this.signal = signal;
    if (signal?.aborted) this.start();
    else signal?.addEventListener("abort", this.onAbort, { once: true });
  }

  start(): void {
    if (this.repeat !== undefined) return;
    this.con.interrupt();
    this.repeat = setInterval(() => this.con.interrupt(), INTERRUPT_REPEAT_MS);
  }

  /** Stops interrupting, once the DuckDB call it was meant for has returned. */
  stop(): void {
    clearInterval(this.repeat);
    this.repeat = undefined;
  }

  /** Stops interrupting for good: the signal is no longer listened to. */
  dispose(): void {
    this.stop();
    this.signal?.removeEventListener("abort", this.onAbort);
  }
}

/** Why a request's DuckDB work was stopped, if it was; `cause` is the failure the stop caused. */
export type StopReason = (cause?: unknown) => Error | undefined;

/**
 * One DuckDB call made for a client's statement. Once `stopReason` gives an error (a
 * deadline passed, the catalog is closing) the call is not started, and a call that was
 * running fails with that error. Otherwise DuckDB's errors are the statement's fault: a
 * MonError goes through as thrown, anything else is a 400 with DuckDB's message (as
 * `describe` renders it). An interrupt can also end a call as if it had completed (a
 * result's fetch): the caller checks `stopReason` again where that matters.
 */
export async function clientCall<T>(
  call: () => Promise<T>,
  stopReason: StopReason,
  describe: (message: string) => string = (message) => message,
): Promise<T> {
  const before = stopReason();
  if (before) throw before;
  try {
    return await call();
  } catch (cause) {
    const stop = stopReason(cause);
    if (stop) throw stop;
    if (cause instanceof MonError) throw cause;
    throw new BadRequestError(describe(cause instanceof Error ? cause.message : String(cause)), { cause });
  }
}
