/**
 * db.explain (spec: db.explain): the statement must pass db.query's read-only rule; it is
 * then prepared again under EXPLAIN (plan only) or EXPLAIN ANALYZE (runs it, with per-operator
 * timing), bound with the same positional parameters, and run within `timeoutMs` (408).
 */
import { StatementType, type DuckDBConnection } from "@duckdb/node-api";
import { BadRequestError, QueryTimeoutError } from "../domain/index.ts";
import type { ExplainReply } from "../protocol/index.ts";
import type { Catalog } from "./open-catalog.ts";
import { bindParams, type ReadOnlyQuery } from "./query.ts";
import { pragmaName, prepareReadOnly } from "./read-only-guard.ts";

/** How often a stopped statement is interrupted again until it gives up its connection. */
const INTERRUPT_REPEAT_MS = 50;

export interface ExplainQuery extends ReadOnlyQuery {
  readonly analyze: boolean;
}

/**
 * Plans (or, with `analyze`, runs and profiles) one read-only statement. Throws
 * BadRequestError for a statement the read-only guard refuses or DuckDB cannot parse, bind
 * or run, and QueryTimeoutError past `timeoutMs` or when the catalog closes meanwhile.
 */
export async function explainReadOnly(
  catalog: Catalog,
  request: ExplainQuery,
  options: { timeoutMs: number },
): Promise<ExplainReply> {
  const deadline = new AbortController();
  const stopReason = (): QueryTimeoutError | undefined =>
    catalog.closing
      ? new QueryTimeoutError("the explain was stopped: the catalog is shutting down")
      : deadline.signal.aborted
        ? new QueryTimeoutError(`the explain ran past db.query-timeout (${options.timeoutMs} ms)`)
        : undefined;
  const timer = setTimeout(() => deadline.abort(stopReason()), options.timeoutMs);
  try {
    return await catalog.withReader(async (con) => {
      const stop = stopReason();
      if (stop) throw stop;
      return await explainOn(con, request, deadline.signal, stopReason);
    }, deadline.signal);
  } finally {
    clearTimeout(timer);
  }
}

async function explainOn(
  con: DuckDBConnection,
  request: ExplainQuery,
  deadline: AbortSignal,
  stopReason: () => QueryTimeoutError | undefined,
): Promise<ExplainReply> {
  // The guard sees the statement exactly as sent; only then is it wrapped.
  (await prepareReadOnly(con, request.sql)).destroySync();
  // DuckDB runs a PRAGMA as the SELECT it stands for, but cannot EXPLAIN one.
  const pragma = pragmaName(request.sql);
  if (pragma !== undefined) {
    throw new BadRequestError(
      `PRAGMA ${pragma} cannot be explained (DuckDB plans no PRAGMA); explain a SELECT over ` +
        "the table function instead, such as SELECT * FROM pragma_table_info('hx.epochs')",
    );
  }
  // On the statement's first line, so the line numbers of DuckDB's errors are the client's.
  const wrapped = `${request.analyze ? "EXPLAIN ANALYZE" : "EXPLAIN"} ${request.sql}`;
  const extracted = await duck(() => con.extractStatements(wrapped), stopReason);
  if (extracted.count !== 1) throw new BadRequestError("the statement cannot be explained");
  const prepared = await duck(() => extracted.prepare(0), stopReason);
  let repeat: ReturnType<typeof setInterval> | undefined;
  // An interrupt only reaches a running statement, so keep sending it until the run ends.
  const interrupt = () => {
    con.interrupt();
    repeat ??= setInterval(() => con.interrupt(), INTERRUPT_REPEAT_MS);
  };
  deadline.addEventListener("abort", interrupt, { once: true });
  try {
    if (prepared.statementType !== StatementType.EXPLAIN) {
      throw new BadRequestError("the statement cannot be explained");
    }
    bindParams(prepared, request.params ?? []);
    const reader = await duck(() => prepared.runAndReadAll(), stopReason);
    const stop = stopReason();
    if (stop) throw stop;
    const text = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));
    const plan = reader.getRowObjectsJson().map((row) => ({
      explain_key: text(row.explain_key),
      explain_value: text(row.explain_value),
    }));
    return { valid: true, plan };
  } finally {
    clearInterval(repeat);
    deadline.removeEventListener("abort", interrupt);
    prepared.destroySync();
  }
}

/** DuckDB errors are the statement's fault (400), unless it was stopped (408). */
async function duck<T>(call: () => Promise<T>, stopReason: () => QueryTimeoutError | undefined): Promise<T> {
  try {
    return await call();
  } catch (cause) {
    const stop = stopReason();
    if (stop) throw stop;
    throw new BadRequestError(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}
