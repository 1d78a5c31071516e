/**
 * db.explain (spec: db.explain): the statement must pass db.query's read-only rule; it is
 * then prepared again under EXPLAIN (plan only) or EXPLAIN ANALYZE (runs it, with per-operator
 * timing), bound with the same positional parameters, and run within `timeoutMs` (408).
 */
import { StatementType } from "@duckdb/node-api";
import { BadRequestError } from "../domain/index.ts";
import type { ExplainReply } from "../protocol/index.ts";
import type { Catalog } from "./open-catalog.ts";
import { bindParams, type ReadOnlyQuery } from "./query.ts";
import { ReadOnlyRule, pragmaCall, prepareReadOnly } from "./read-only-guard.ts";
import { withTimedReader, type TimedReader } from "./timed-reader.ts";

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
  return withTimedReader(catalog, { what: "explain", timeoutMs: options.timeoutMs }, (reader) =>
    explainOn(reader, request),
  );
}

async function explainOn(reader: TimedReader, request: ExplainQuery): Promise<ExplainReply> {
  const { con } = reader;
  // The guard sees the statement exactly as sent; only then is it wrapped.
  (await reader.call(() => prepareReadOnly(con, request.sql, ReadOnlyRule.explain))).destroySync();
  // DuckDB runs a PRAGMA as the SELECT it stands for, but cannot EXPLAIN one.
  const pragma = pragmaCall(request.sql);
  if (pragma !== undefined) throw new BadRequestError(await pragmaRefusal(reader, pragma));
  // On the statement's first line, so the line numbers of DuckDB's errors are the client's.
  const prefix = request.analyze ? "EXPLAIN ANALYZE " : "EXPLAIN ";
  const wrapped = `${prefix}${request.sql}`;
  const asSent = (message: string) => withoutPrefix(message, prefix, request.sql);
  const extracted = await reader.call(() => con.extractStatements(wrapped), asSent);
  if (extracted.count !== 1) throw new BadRequestError("the statement cannot be explained");
  const prepared = await reader.call(() => extracted.prepare(0), asSent);
  try {
    if (prepared.statementType !== StatementType.EXPLAIN) {
      throw new BadRequestError("the statement cannot be explained");
    }
    bindParams(prepared, request.params ?? []);
    const result = await reader.call(() => prepared.runAndReadAll(), asSent);
    reader.throwIfStopped();
    const text = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));
    const plan = result.getRowObjectsJson().map((row) => ({
      explain_key: text(row.explain_key),
      explain_value: text(row.explain_value),
    }));
    return { valid: true, plan };
  } finally {
    prepared.destroySync();
  }
}

/**
 * DuckDB quotes the line an error is on, the caret under the spot. On the first line of the
 * wrapped statement that quote starts with `prefix`, or with its tail after the "..." of a
 * line cut short: drop that and move the caret with it, so the quote is the one db.query
 * gives for the statement as sent.
 */
function withoutPrefix(message: string, prefix: string, sql: string): string {
  const quote = /\nLINE 1: (\.\.\.)?([^\n]*)\n( *)\^/.exec(message);
  if (!quote) return message;
  const [whole, cut = "", shown = "", caret = ""] = quote;
  const firstLine = sql.split(/[\r\n]/, 1)[0] ?? "";
  const isStart = (rest: string) =>
    firstLine.startsWith(rest) || firstLine.startsWith(rest.replace(/\.\.\.$/, ""));
  // The whole prefix, when the line is quoted from its start; else a tail of it after "...".
  const tails = cut ? [...prefix].map((_, i) => prefix.slice(i)).slice(1) : [prefix];
  const tail = tails.find((t) => shown.startsWith(t) && isStart(shown.slice(t.length)));
  if (tail === undefined) return message;
  const unquoted = `\nLINE 1: ${shown.slice(tail.length)}\n${" ".repeat(caret.length - cut.length - tail.length)}^`;
  return message.slice(0, quote.index) + unquoted + message.slice(quote.index + whole.length);
}

/**
 * Why a PRAGMA cannot be explained, and what to explain instead: the table function DuckDB
 * has for most read-only PRAGMAs (`pragma_version()`), else the SELECT the PRAGMA stands for.
 */
async function pragmaRefusal(
  reader: TimedReader,
  pragma: { name: string; args: string | undefined },
): Promise<string> {
  const refusal = `PRAGMA ${pragma.name} cannot be explained (DuckDB plans no PRAGMA)`;
  const fn = `pragma_${pragma.name.toLowerCase()}`;
  const found = await reader.call(() =>
    reader.con.runAndReadAll(
      "SELECT 1 FROM duckdb_functions() WHERE function_name = $1 AND function_type = 'table' LIMIT 1",
      [fn],
    ),
  );
  if (found.currentRowCount === 0) return `${refusal}; explain the SELECT it stands for instead`;
  return `${refusal}; explain a SELECT over its table function instead: SELECT * FROM ${fn}(${pragma.args ?? "…"})`;
}
