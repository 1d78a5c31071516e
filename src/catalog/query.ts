/**
 * db.query (spec: db.query, Errors, Limits): one read-only statement with positional
 * parameters, run on a read connection, streamed chunk by chunk into a buffered JSON or
 * CSV reply, capped at `maxRows` rows (413) and `timeoutMs` (408).
 */
import {
  BIGINT,
  BOOLEAN,
  DOUBLE,
  HUGEINT,
  SQLNULL,
  VARCHAR,
  type DuckDBConnection,
  type DuckDBPreparedStatement,
  type DuckDBType,
  type DuckDBValue,
} from "@duckdb/node-api";
import { BadRequestError, QueryTimeoutError, TooManyRowsError } from "../domain/index.ts";
import type { Catalog } from "./open-catalog.ts";
import { prepareReadOnly } from "./read-only-guard.ts";
import { beginReadTransaction, checkReadTransaction, endReadTransaction } from "./read-transaction.ts";
import { renderValue } from "./render.ts";
import { csvText, jsonText, type ResultText } from "./result-text.ts";

/** How often a stopped query is interrupted again until it gives up its connection. */
const INTERRUPT_REPEAT_MS = 50;

export interface ReadOnlyQuery {
  readonly sql: string;
  /** Positional parameters ($1 or ?): strings, numbers, bigints, booleans or null. */
  readonly params?: readonly unknown[];
}

export interface QueryOptions {
  /** db.query-max-rows: a result with more rows is refused with 413. */
  readonly maxRows: number;
  /** db.query-timeout, counted from the call: waiting for a connection included. */
  readonly timeoutMs: number;
  readonly format: "json" | "csv";
}

/**
 * Runs a db.query request. Throws BadRequestError (400) for a statement that is not one
 * read-only query, or that fails to parse, bind or run; TooManyRowsError (413) as soon as
 * the rows pass `maxRows`; QueryTimeoutError (408) when `timeoutMs` passes or the catalog
 * closes meanwhile. The read connection is interrupted and stays usable.
 */
export async function runReadOnlyQuery(
  catalog: Catalog,
  request: ReadOnlyQuery,
  options: QueryOptions,
): Promise<string> {
  const deadline = new AbortController();
  const timeout = () =>
    new QueryTimeoutError(`the query ran past db.query-timeout (${options.timeoutMs} ms)`);
  const stopReason = (): QueryTimeoutError | undefined =>
    catalog.closing
      ? new QueryTimeoutError("the query was stopped: the catalog is shutting down")
      : deadline.signal.aborted
        ? timeout()
        : undefined;
  const timer = setTimeout(() => deadline.abort(timeout()), options.timeoutMs);
  try {
    return await catalog.withReader(async (con) => {
      // The timer may have fired while this call waited for the connection.
      const stop = stopReason();
      if (stop) throw stop;
      // A read transaction, so a failure after the first rows is seen (read-transaction.ts).
      await duck(() => beginReadTransaction(con), stopReason);
      try {
        return await run(con, request, options, deadline.signal, stopReason);
      } finally {
        await endReadTransaction(con);
      }
    }, deadline.signal);
  } finally {
    clearTimeout(timer);
  }
}

async function run(
  con: DuckDBConnection,
  request: ReadOnlyQuery,
  options: QueryOptions,
  deadline: AbortSignal,
  stopReason: () => QueryTimeoutError | undefined,
): Promise<string> {
  const prepared = await prepareReadOnly(con, request.sql);
  // An interrupt only reaches a statement DuckDB is already running; one that lands between
  // two calls is lost. So once the deadline passes, interrupt again until the query is done.
  let repeat: ReturnType<typeof setInterval> | undefined;
  const interrupt = () => {
    con.interrupt();
    repeat ??= setInterval(() => con.interrupt(), INTERRUPT_REPEAT_MS);
  };
  deadline.addEventListener("abort", interrupt, { once: true });
  try {
    bindParams(prepared, request.params ?? []);
    const stop = stopReason();
    if (stop) throw stop;
    const result = await duck(() => prepared.stream(), stopReason);
    const columns = result.columnNames();
    const types = result.columnTypes();
    const out: ResultText = options.format === "csv" ? csvText(columns) : jsonText(columns);
    let rows = 0;
    for (;;) {
      const chunk = await duck(() => result.fetchChunk(), stopReason);
      // An interrupt can end a stream as if it were complete: never return a cut result.
      const stop = stopReason();
      if (stop) throw stop;
      if (!chunk || chunk.rowCount === 0) {
        await duck(() => checkReadTransaction(con), stopReason);
        break;
      }
      rows += chunk.rowCount;
      if (rows > options.maxRows) {
        throw new TooManyRowsError(
          `the result has more than ${options.maxRows} rows (db.query-max-rows); add a LIMIT or use db.query.stream`,
        );
      }
      for (const row of chunk.getRows()) out.addRow(row.map((value, i) => renderValue(value, types[i]!)));
    }
    return out.text();
  } finally {
    clearInterval(repeat);
    deadline.removeEventListener("abort", interrupt);
    prepared.destroySync();
  }
}

/**
 * Binds positional parameters with explicit types; DuckDB casts them where the statement
 * needs another type (a string compared with a TIMESTAMPTZ, say).
 */
export function bindParams(prepared: DuckDBPreparedStatement, params: readonly unknown[]): void {
  if (prepared.parameterCount !== params.length) {
    throw new BadRequestError(
      `the statement has ${prepared.parameterCount} parameters and ${params.length} were given`,
    );
  }
  if (params.length === 0) return;
  const bound = params.map(param);
  try {
    prepared.bind(
      bound.map(([value]) => value),
      bound.map(([, type]) => type),
    );
  } catch (cause) {
    throw new BadRequestError(`cannot bind the parameters: ${(cause as Error).message}`, { cause });
  }
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const INT128_MIN = -(2n ** 127n);
const INT128_MAX = 2n ** 127n - 1n;

/**
 * One parameter with its DuckDB type. Integers are exact: a safe one or a bigint (an
 * integer literal beyond 2^53, kept whole by the request parser) is a BIGINT, or a HUGEINT
 * past BIGINT's range; other numbers are DOUBLEs. A number no DOUBLE holds (`1e400`
 * parses as Infinity) is refused rather than bound as inf.
 */
function param(value: unknown, i: number): [DuckDBValue, DuckDBType] {
  if (value === null) return [null, SQLNULL];
  if (typeof value === "string") return [value, VARCHAR];
  if (typeof value === "boolean") return [value, BOOLEAN];
  if (typeof value === "bigint") {
    if (value >= INT64_MIN && value <= INT64_MAX) return [value, BIGINT];
    if (value >= INT128_MIN && value <= INT128_MAX) return [value, HUGEINT];
    throw new BadRequestError(`params[${i}] is an integer beyond HUGEINT's range; pass it as a string`);
  }
  if (typeof value === "number") {
    if (Number.isSafeInteger(value)) return [BigInt(value), BIGINT];
    if (!Number.isFinite(value)) {
      throw new BadRequestError(`params[${i}] is a number beyond DOUBLE's range; pass it as a string`);
    }
    return [value, DOUBLE];
  }
  throw new BadRequestError(`params[${i}] must be a string, number, boolean or null`);
}

/** DuckDB errors while running are the query's fault (400), unless it was stopped (408). */
async function duck<T>(call: () => Promise<T>, stopReason: () => QueryTimeoutError | undefined): Promise<T> {
  try {
    return await call();
  } catch (cause) {
    const stop = stopReason();
    if (stop) throw stop;
    throw new BadRequestError(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}
