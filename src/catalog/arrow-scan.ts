/**
 * A DuckDB result read as Arrow record batches, for db.query.stream and db.backup.stream.
 * The scan holds one connection (a read connection, or the backup connection) from open
 * to close, pulls DuckDB chunks only as batches are asked for, and gives the connection
 * back on close, interrupting whatever runs once the caller aborts.
 */
import type { DuckDBConnection, DuckDBDataChunk, DuckDBPreparedStatement } from "@duckdb/node-api";
import { Field, RecordBatch, Schema, Struct, makeData } from "apache-arrow";
import { QueryTimeoutError } from "../domain/index.ts";
import { uniqueNames } from "../lib/index.ts";
import { ArrowFieldMetadata } from "../protocol/index.ts";
import { columnBuilder, type ColumnBuilder } from "./arrow-columns.ts";
import { ConnectionInterrupter, clientCall } from "./connection-interrupter.ts";
import type { Catalog } from "./open-catalog.ts";
import { bindParams, type ReadOnlyQuery } from "./query.ts";
import { prepareReadOnly } from "./read-only-guard.ts";
import { beginReadTransaction, checkReadTransaction, endReadTransaction } from "./read-transaction.ts";

export interface ArrowScan {
  readonly schema: Schema;
  /**
   * Aborts when the catalog starts closing. A caller waiting between next() calls should
   * call next() again then: it throws QueryTimeoutError (408) and the scan must be closed.
   */
  readonly stopped: AbortSignal;
  /**
   * The next batch of at most `maxRows` rows (fewer only at the end), or undefined once
   * the result is exhausted. Throws BadRequestError (400) when DuckDB fails the query,
   * QueryTimeoutError (408) past the step timeout or when the catalog closes. The batch's
   * buffers are reused by the next call: encode or copy the batch before calling again.
   */
  next(maxRows: number): Promise<RecordBatch | undefined>;
  /** Frees the statement and gives the connection back. Call it once, after the last next(). */
  close(): Promise<void>;
}

export interface ArrowScanOptions {
  /** "query": the read connections, shared with db.query; "backup": the backup connection. */
  readonly pool: "query" | "backup";
  /** Server-built SQL: skips the read-only guard (db.backup.stream). Never for client SQL. */
  readonly trusted?: boolean;
  /** Aborting interrupts the running DuckDB call; the scan then fails and must be closed. */
  readonly signal?: AbortSignal;
  /**
   * Bound on each wait: for a connection, for preparing and starting the query, and for
   * each DuckDB chunk (db.query-timeout). Expiry gives 408. Time spent between next()
   * calls (waiting for a slow reader) does not count.
   */
  readonly stepTimeoutMs: number;
}

/**
 * Prepares and starts `request` on a connection of `options.pool`. Throws BadRequestError
 * (400) for a statement that is not one read-only query (unless trusted) or that fails to
 * prepare, bind or start; QueryTimeoutError (408) when no connection frees up in time or the
 * catalog is closing.
 */
export function openArrowScan(
  catalog: Catalog,
  request: ReadOnlyQuery,
  options: ArrowScanOptions,
): Promise<ArrowScan> {
  const borrow = <T>(fn: (con: DuckDBConnection) => Promise<T>, signal: AbortSignal) =>
    options.pool === "backup" ? catalog.withBackupReader(fn, signal) : catalog.withReader(fn, signal);
  return new Promise<ArrowScan>((resolve, reject) => {
    const waiting = new AbortController();
    const timer = setTimeout(
      () => waiting.abort(new QueryTimeoutError(noConnectionMessage(options))),
      options.stepTimeoutMs,
    );
    const gaveUp = () => waiting.abort(options.signal?.reason);
    options.signal?.addEventListener("abort", gaveUp, { once: true });
    const done = () => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", gaveUp);
    };
    let released!: () => void;
    const closed = new Promise<void>((r) => (released = r));
    const lease = borrow(async (con) => {
      done();
      let scan: ArrowScan;
      try {
        scan = await startScan(catalog, con, request, options, release);
      } catch (err) {
        // Rejected once the connection is back, so the caller's next query finds it free.
        await endReadTransaction(con);
        throw err;
      }
      resolve(scan);
      // The connection stays lent out until the scan is closed.
      await closed;
      await endReadTransaction(con);
    }, waiting.signal).catch((err: unknown) => {
      done();
      reject(asError(err));
    });
    /** Ends the lease; resolves once the connection is back in its pool. */
    const release = () => {
      released();
      return lease;
    };
  });
}

/**
 * Why a scan got no connection in time. The backup connection is held for a whole table's
 * stream and only db.backup.stream uses it, so a wait for it is a wait for another backup:
 * the operator needs that, and what to do, rather than a pool's name.
 */
function noConnectionMessage(options: ArrowScanOptions): string {
  const limit = `db.query-timeout (${options.stepTimeoutMs} ms)`;
  if (options.pool === "query") return `no database connection was free within ${limit}`;
  return (
    `another backup is running on this node: backups are served one table stream at a time, and ` +
    `this one waited ${limit} for its turn; retry once the other backup has finished (or raise ` +
    "db.query-timeout so that backups wait longer for each other)"
  );
}

async function startScan(
  catalog: Catalog,
  con: DuckDBConnection,
  request: ReadOnlyQuery,
  options: ArrowScanOptions,
  release: () => Promise<void>,
): Promise<ArrowScan> {
  const stopReason = (): Error | undefined =>
    catalog.closing
      ? new QueryTimeoutError("the query was stopped: the catalog is shutting down")
      : options.signal?.aborted
        ? abortReason(options.signal)
        : undefined;
  let stop = stopReason();
  if (stop) throw stop;

  // Interrupts once the caller aborts, and on a step's timeout (connection-interrupter.ts).
  const interrupter = new ConnectionInterrupter(con, options.signal);
  let prepared: DuckDBPreparedStatement | undefined;
  const cleanup = () => {
    interrupter.dispose();
    prepared?.destroySync();
    prepared = undefined;
  };

  /** Runs one DuckDB call under the step timeout; its errors are the query's (400) unless stopped. */
  const step = async <T>(call: () => Promise<T>): Promise<T> => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      interrupter.start();
    }, options.stepTimeoutMs);
    const stepStopReason = (cause?: unknown) => (timedOut ? timeoutError(options, cause) : stopReason());
    try {
      const value = await clientCall(call, stepStopReason);
      // An interrupt can end a call as if it had completed.
      const stopped = stepStopReason();
      if (stopped) throw stopped;
      return value;
    } finally {
      clearTimeout(timer);
      // Interrupting on timeout repeats; once the call is back there is nothing to stop.
      if (timedOut && !options.signal?.aborted) interrupter.stop();
    }
  };

  try {
    await step(() => beginReadTransaction(con));
    prepared = await step(() =>
      options.trusted ? con.prepare(request.sql) : prepareReadOnly(con, request.sql),
    );
    bindParams(prepared, request.params ?? []);
    const statement = prepared;
    const result = await step(() => statement.stream());
    // A result may repeat a name (`SELECT 1 AS x, 'a' AS x`). apache-arrow matches fields by
    // name when it builds a batch, so repeats would give the batch another schema than the
    // stream's (and its writer ends the stream there); many Arrow readers refuse repeated
    // names too. They are suffixed as db.query's JSON keys are (x, x_1).
    const names = uniqueNames(result.columnNames());
    const types = result.columnTypes();
    const builders: ColumnBuilder[] = types.map(columnBuilder);
    const schema = new Schema(
      names.map((name, i) => {
        const builder = builders[i]!;
        const metadata = new Map<string, string>([[ArrowFieldMetadata.DuckDBType, types[i]!.toString()]]);
        if (builder.encoding) metadata.set(ArrowFieldMetadata.Encoding, builder.encoding);
        return new Field(name, builder.type, true, metadata);
      }),
    );
    const struct = new Struct(schema.fields);

    let pending: { chunk: DuckDBDataChunk; offset: number } | undefined;
    let exhausted = false;
    let closed = false;
    /**
     * The next DuckDB chunk, asked for as soon as the previous one arrived: DuckDB produces
     * it on its own thread while this one is copied into Arrow buffers (a third faster on
     * a 1M-row scan). Its failure is kept for the await that takes it.
     */
    let ahead: Promise<DuckDBDataChunk | null> | undefined;
    const fetchAhead = () => {
      const fetched = step(() => result.fetchChunk());
      fetched.catch(() => undefined);
      return fetched;
    };
    return {
      schema,
      stopped: catalog.closingSignal,
      async next(maxRows) {
        let rows = 0;
        while (rows < maxRows) {
          if (!pending) {
            if (exhausted) break;
            const chunk = await (ahead ?? fetchAhead());
            ahead = undefined;
            // An interrupt can end a stream as if it were complete: step() has thrown then.
            if (!chunk || chunk.rowCount === 0) {
              exhausted = true;
              await step(() => checkReadTransaction(con));
              break;
            }
            pending = { chunk, offset: 0 };
            ahead = fetchAhead();
          }
          const take = Math.min(pending.chunk.rowCount - pending.offset, maxRows - rows);
          for (let c = 0; c < builders.length; c++)
            builders[c]!.append(pending.chunk, c, pending.offset, take);
          rows += take;
          pending.offset += take;
          if (pending.offset === pending.chunk.rowCount) pending = undefined;
        }
        stop = stopReason();
        if (stop) throw stop;
        if (rows === 0) return undefined;
        const children = builders.map((b) => b.finish());
        return new RecordBatch(schema, makeData({ type: struct, length: rows, nullCount: 0, children }));
      },
      async close() {
        if (closed) return;
        closed = true;
        pending = undefined;
        // A chunk still being fetched holds the connection: stop it (nobody will read it)
        // and wait for the call to return before the connection goes back to its pool.
        if (ahead) interrupter.start();
        await ahead?.catch(() => undefined);
        ahead = undefined;
        cleanup();
        await release();
      },
    };
  } catch (err) {
    cleanup();
    throw err;
  }
}

function timeoutError(options: ArrowScanOptions, cause?: unknown): QueryTimeoutError {
  return new QueryTimeoutError(
    `a step of the query ran past db.query-timeout (${options.stepTimeoutMs} ms)`,
    {
      cause,
    },
  );
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error("the scan was aborted");
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
