/**
 * The read-only rule of db.query (spec: db.query): the payload must be exactly one
 * statement, prepared (parsed and bound, never executed) by DuckDB itself and classified
 * SELECT, which covers WITH, FROM-first, VALUES, DESCRIBE, SHOW, SUMMARIZE and the PRAGMAs
 * DuckDB rewrites into queries. Everything else is a 400 naming the statement type.
 *
 * DuckDB also classifies as SELECT a few table functions that change state when run
 * (`SELECT * FROM checkpoint()`, `enable_logging()`, `enable_profiling()`, …) and two that
 * run SQL given as text, out of the classifier's sight (`query('…')`,
 * `json_execute_serialized_sql`). The statement's syntax tree (json_serialize_sql, a
 * parse without binding) is searched for them and they are refused too.
 */
import { StatementType, type DuckDBConnection, type DuckDBPreparedStatement } from "@duckdb/node-api";
import { BadRequestError } from "../domain/index.ts";

/** The rule a refusal ends with, in the words of the endpoint that refused. */
export const ReadOnlyRule = {
  query:
    "db.query accepts a single read-only statement (SELECT, WITH, FROM, DESCRIBE, SHOW, SUMMARIZE); EXPLAIN → use db.explain",
  explain:
    "db.explain takes a single read-only statement (SELECT, WITH, FROM, DESCRIBE, SHOW, SUMMARIZE); " +
    "send it without EXPLAIN, and set analyze: true to run it",
} as const;
export type ReadOnlyRule = (typeof ReadOnlyRule)[keyof typeof ReadOnlyRule];

/**
 * Functions refused inside a SELECT. The pinned DuckDB's table functions are each reviewed
 * in test/integration/catalog/read-only-guard.test.ts, which fails when an upgrade adds one.
 */
export const REFUSED_FUNCTIONS: ReadonlySet<string> = new Set([
  "checkpoint",
  "force_checkpoint",
  "enable_logging",
  "disable_logging",
  "truncate_duckdb_logs",
  "enable_profiling",
  "disable_profiling",
  "enable_peg_parser",
  "disable_peg_parser",
  "query",
  "json_execute_serialized_sql",
  "arrow_scan",
  "arrow_scan_dumb",
  // Scalar, but it reseeds random() on the pooled connection for every later client.
  "setseed",
]);

/**
 * PRAGMAs DuckDB rewrites into a SELECT over a built-in table function. They cannot be
 * serialized for inspection, so only these read-only ones pass.
 */
const READ_ONLY_PRAGMAS: ReadonlySet<string> = new Set([
  "collations",
  "database_list",
  "database_size",
  "extension_versions",
  "functions",
  "metadata_info",
  "platform",
  "show_databases",
  "show_tables",
  "show_tables_expanded",
  "storage_info",
  "table_info",
  "user_agent",
  "version",
]);

/** Prepares `sql` if it is one read-only statement; otherwise throws BadRequestError. */
export async function prepareReadOnly(
  con: DuckDBConnection,
  sql: string,
  rule: ReadOnlyRule = ReadOnlyRule.query,
): Promise<DuckDBPreparedStatement> {
  // DuckDB takes a NUL as the end of the SQL: what follows it would be neither checked nor run.
  if (sql.includes("\u0000")) {
    throw new BadRequestError("the SQL contains a NUL character (U+0000), which DuckDB cannot read past");
  }
  // DuckDB fails a payload with no statement (empty, or only `;` and comments) with a bare
  // "Error in native callback".
  if (withoutLeadingComments(sql, true) === "") {
    throw new BadRequestError(`exactly one statement expected, got none: ${rule}`);
  }
  const extracted = await duck(() => con.extractStatements(sql));
  if (extracted.count !== 1) {
    throw new BadRequestError(`exactly one statement expected, got ${extracted.count}: ${rule}`);
  }
  const prepared = await duck(() => extracted.prepare(0));
  try {
    if (prepared.statementType !== StatementType.SELECT) {
      const kind = (StatementType[prepared.statementType] ?? `type ${prepared.statementType}`).replaceAll(
        "_",
        " ",
      );
      throw new BadRequestError(`${kind} statements are refused: ${rule}`);
    }
    await refuseStatefulFunctions(con, sql, rule);
    return prepared;
  } catch (err) {
    prepared.destroySync();
    throw err;
  }
}

async function refuseStatefulFunctions(
  con: DuckDBConnection,
  sql: string,
  rule: ReadOnlyRule,
): Promise<void> {
  const reader = await con.runAndReadAll("SELECT json_serialize_sql($1::VARCHAR)", [sql]);
  const serialized = reader.getRowsJS()[0]?.[0];
  const tree = JSON.parse(typeof serialized === "string" ? serialized : '{"error":true}') as {
    error?: boolean;
  };
  if (tree.error) {
    const pragma = pragmaName(sql);
    if (pragma !== undefined && READ_ONLY_PRAGMAS.has(pragma.toLowerCase())) return;
    const hint = /pragma/i.test(sql)
      ? " (a read-only PRAGMA passes when written plainly: PRAGMA name or PRAGMA name(args), with comments only before it and none nested)"
      : "";
    throw new BadRequestError(`this statement cannot be checked as read-only${hint}: ${rule}`);
  }
  const refused = [...functionNames(tree)].filter((name) => REFUSED_FUNCTIONS.has(name));
  if (refused.length > 0) {
    throw new BadRequestError(
      `${refused.map((f) => `${f}()`).join(", ")} changes database state or runs SQL from text: ${rule}`,
    );
  }
}

/** Every function name in a serialized syntax tree, lower-cased. */
function functionNames(node: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(node)) {
    for (const item of node) functionNames(item, into);
  } else if (typeof node === "object" && node !== null) {
    for (const [key, value] of Object.entries(node)) {
      if (key === "function_name" && typeof value === "string") into.add(value.toLowerCase());
      else functionNames(value, into);
    }
  }
  return into;
}

/** The name of the PRAGMA `sql` is (`PRAGMA table_info(…)` → `table_info`); undefined for any other statement. */
export function pragmaName(sql: string): string | undefined {
  return pragmaCall(sql)?.name;
}

/**
 * The PRAGMA `sql` is, with its arguments as written (`PRAGMA table_info('t')` → `'t'`,
 * `PRAGMA version` → ``), read only when nothing in it can be read two ways: comments before
 * it only (no `/*` inside a block comment: DuckDB nests them), and after `PRAGMA name` only
 * `(…)` free of comment marks, then `;` and whitespace. Anything else is undefined, so the
 * guard refuses it rather than check one PRAGMA while DuckDB runs another.
 */
export function pragmaCall(sql: string): { name: string; args: string | undefined } | undefined {
  const rest = withoutLeadingComments(sql);
  if (rest === undefined) return undefined;
  const call = /^PRAGMA\s+([A-Za-z_][A-Za-z0-9_]*)(?:\s*\(([^;]*)\))?\s*;?\s*$/i.exec(rest);
  if (!call) return undefined;
  const args = call[2] ?? "";
  if (/--|\/\*|\*\//.test(args)) return undefined;
  return { name: call[1]!, args };
}

/**
 * `sql` from its first token on: whitespace and comments skipped, and empty statements (`;`)
 * too when asked. A line comment ends at \n or \r, as DuckDB ends it; undefined when a block
 * comment holds another `/*` (DuckDB nests block comments, this does not read them) or is not
 * closed.
 */
function withoutLeadingComments(sql: string, semicolons = false): string | undefined {
  const space = semicolons ? /^[\s;]+/ : /^\s+/;
  let rest = sql;
  for (;;) {
    const before = rest;
    rest = rest.replace(space, "").replace(/^--[^\r\n]*/, "");
    if (rest.startsWith("/*")) {
      const end = rest.indexOf("*/", 2);
      if (end < 0 || rest.slice(2, end).includes("/*")) return undefined;
      rest = rest.slice(end + 2);
    }
    if (rest === before) return rest;
  }
}

/** Runs a DuckDB call, turning its errors (parse, bind, catalog, I/O) into 400s with DuckDB's message. */
async function duck<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (cause) {
    throw new BadRequestError(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}
