/**
 * A read connection lent to one client request (db.query, db.explain) for at most
 * db.query-timeout, counted from the call: waiting for the connection included. From the
 * moment the connection is lent until the request is done with it, the deadline interrupts
 * whatever DuckDB does for the request, preparing included (connection-interrupter.ts).
 */
import type { DuckDBConnection } from "@duckdb/node-api";
import { QueryTimeoutError } from "../domain/index.ts";
import { ConnectionInterrupter, clientCall } from "./connection-interrupter.ts";
import type { Catalog } from "./open-catalog.ts";

export interface TimedReader {
  readonly con: DuckDBConnection;
  /**
   * One DuckDB call for the request (clientCall): QueryTimeoutError (408) once the deadline
   * passed or the catalog is closing, BadRequestError (400) with DuckDB's message, rendered
   * by `describe`, when it fails.
   */
  call<T>(fn: () => Promise<T>, describe?: (message: string) => string): Promise<T>;
  /** Throws QueryTimeoutError if stopped: after a call an interrupt can end as if complete. */
  throwIfStopped(): void;
}

export interface TimedReaderOptions {
  /** The request as its 408 names it: "query", "explain". */
  readonly what: string;
  /** db.query-timeout. */
  readonly timeoutMs: number;
  /** Runs once the request is done and no longer interrupted, before the connection goes back. */
  readonly release?: (con: DuckDBConnection) => Promise<void>;
}

/** Runs `fn` on a read connection; throws QueryTimeoutError when no connection frees up in time. */
export async function withTimedReader<T>(
  catalog: Catalog,
  options: TimedReaderOptions,
  fn: (reader: TimedReader) => Promise<T>,
): Promise<T> {
  const deadline = new AbortController();
  const timeout = (cause?: unknown) =>
    new QueryTimeoutError(`the ${options.what} ran past db.query-timeout (${options.timeoutMs} ms)`, {
      cause,
    });
  const stopReason = (cause?: unknown): QueryTimeoutError | undefined =>
    catalog.closing
      ? new QueryTimeoutError(`the ${options.what} was stopped: the catalog is shutting down`, { cause })
      : deadline.signal.aborted
        ? timeout(cause)
        : undefined;
  const timer = setTimeout(() => deadline.abort(timeout()), options.timeoutMs);
  try {
    return await catalog.withReader(async (con) => {
      // Listening before the first call: a deadline passing while the statement is still
      // being prepared must stop the prepare, not wait for it to end.
      const interrupter = new ConnectionInterrupter(con, deadline.signal);
      try {
        return await fn({
          con,
          call: (call, describe) => clientCall(call, stopReason, describe),
          throwIfStopped() {
            const stop = stopReason();
            if (stop) throw stop;
          },
        });
      } finally {
        interrupter.dispose();
        await options.release?.(con);
      }
    }, deadline.signal);
  } finally {
    clearTimeout(timer);
  }
}
