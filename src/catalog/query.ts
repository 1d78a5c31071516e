import {
  DuckDBTypeId,
  JSDuckDBValueConverter,
  StatementType,
  type DuckDBConnection,
  type DuckDBValue,
} from "@duckdb/node-api";
import { BadRequestError, QueryTimeoutError, TooManyRowsError } from "../domain/index.ts";
import type { Catalog } from "./open-catalog.ts";
import { toCsv, toJsonValue, uniqueNames } from "./render.ts";

export interface QueryOptions {
  maxRows: number;
  timeoutMs: number;
  format: "json" | "csv";
}

const STATEMENT_NAMES = Object.fromEntries(Object.entries(StatementType).map(([k, v]) => [v, k])) as Record<
  number,
  string
>;

const READ_ONLY_HINT =
  "db.query accepts a single read-only statement (SELECT, WITH, FROM, VALUES, DESCRIBE, SHOW, SUMMARIZE)";

/**
 * db.query: the statement is prepared by DuckDB's own parser (never executed to decide)
 * and run only if it is one statement classified SELECT. The result is buffered up to
 * `maxRows`, interrupted after `timeoutMs`.
 */
export function runReadOnlyQuery(
  catalog: Catalog,
  request: { sql: string; params?: readonly unknown[] },
  options: QueryOptions,
): Promise<string> {
  return catalog.withReader((con) => run(con, request, options));
}

async function prepareReadOnly(con: DuckDBConnection, sql: string) {
  let extracted;
  try {
    extracted = await con.extractStatements(sql);
  } catch (cause) {
    throw new BadRequestError((cause as Error).message, { cause });
  }
  if (extracted.count !== 1) {
    throw new BadRequestError(`${READ_ONLY_HINT}; this payload has ${extracted.count} statements`);
  }
  let prepared;
  try {
    prepared = await extracted.prepare(0);
  } catch (cause) {
    throw new BadRequestError((cause as Error).message, { cause });
  }
  if (prepared.statementType !== StatementType.SELECT) {
    const kind = STATEMENT_NAMES[prepared.statementType] ?? String(prepared.statementType);
    const hint = prepared.statementType === StatementType.EXPLAIN ? "; use db.explain to see a plan" : "";
    throw new BadRequestError(`${READ_ONLY_HINT}, not ${kind}${hint}`);
  }
  return prepared;
}

async function run(
  con: DuckDBConnection,
  request: { sql: string; params?: readonly unknown[] },
  options: QueryOptions,
): Promise<string> {
  const prepared = await prepareReadOnly(con, request.sql);
  const params = request.params ?? [];
  if (prepared.parameterCount !== params.length) {
    throw new BadRequestError(
      `the statement takes ${prepared.parameterCount} parameters, ${params.length} given`,
    );
  }
  try {
    if (params.length > 0) prepared.bind(params.map(toParam));
  } catch (cause) {
    throw new BadRequestError(`cannot bind parameters: ${(cause as Error).message}`, { cause });
  }
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    con.interrupt();
  }, options.timeoutMs);
  try {
    const result = await prepared.stream();
    const columns = uniqueNames(result.columnNames());
    const dates = result.columnTypes().map((t) => t.typeId === DuckDBTypeId.DATE);
    const rows: unknown[][] = [];
    for (;;) {
      const chunk = await result.fetchChunk();
      if (!chunk || chunk.rowCount === 0) break;
      if (rows.length + chunk.rowCount > options.maxRows) {
        throw new TooManyRowsError(
          `the result has more than ${options.maxRows} rows (db.query-max-rows); add a LIMIT, aggregate, or use db.query.stream`,
        );
      }
      for (const row of chunk.convertRows(JSDuckDBValueConverter)) {
        rows.push(row.map((v, i) => toJsonValue(v, dates[i])));
      }
    }
    if (options.format === "csv") return toCsv(columns, rows);
    return JSON.stringify(rows.map((row) => Object.fromEntries(columns.map((c, i) => [c, row[i]]))));
  } catch (cause) {
    if (timedOut) {
      throw new QueryTimeoutError(
        `the query ran past db.query-timeout (${options.timeoutMs} ms) and was stopped`,
        {
          cause,
        },
      );
    }
    if (cause instanceof TooManyRowsError) throw cause;
    throw new BadRequestError((cause as Error).message, { cause });
  } finally {
    clearTimeout(timer);
  }
}

function toParam(value: unknown): DuckDBValue {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") return value;
  return JSON.stringify(value);
}
