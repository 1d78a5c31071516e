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
  type DuckDBPreparedStatement,
  type DuckDBType,
  type DuckDBValue,
} from "@duckdb/node-api";
import { BadRequestError, TooManyRowsError } from "../domain/index.ts";
import type { Catalog } from "./open-catalog.ts";
import { prepareReadOnly } from "./read-only-guard.ts";
import { beginReadTransaction, checkReadTransaction, endReadTransaction } from "./read-transaction.ts";
import { renderValue } from "./render.ts";
import { csvText, jsonText, type ResultText } from "./result-text.ts";
import { withTimedReader, type TimedReader } from "./timed-reader.ts";

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
  return withTimedReader(
    catalog,
    { what: "query", timeoutMs: options.timeoutMs, release: endReadTransaction },
    async (reader) => {
      // A read transaction, so a failure after the first rows is seen (read-transaction.ts).
      await reader.call(() => beginReadTransaction(reader.con));
      return await run(reader, request, options);
    },
  );
}

async function run(reader: TimedReader, request: ReadOnlyQuery, options: QueryOptions): Promise<string> {
  const prepared = await reader.call(() => prepareReadOnly(reader.con, request.sql));
  try {
    bindParams(prepared, request.params ?? []);
    const result = await reader.call(() => prepared.stream());
    const columns = result.columnNames();
    const types = result.columnTypes();
    const out: ResultText = options.format === "csv" ? csvText(columns) : jsonText(columns);
    let rows = 0;
    for (;;) {
      const chunk = await reader.call(() => result.fetchChunk());
      // An interrupt can end a stream as if it were complete: never return a cut result.
      reader.throwIfStopped();
      if (!chunk || chunk.rowCount === 0) {
        await reader.call(() => checkReadTransaction(reader.con));
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
