/** Rewrites of the hx views' stored definitions, for migrations that change how views join. */
import type { DuckDBConnection } from "@duckdb/node-api";
import { quote } from "./ddl.ts";

/** A VARCHAR DuckDB's catalog functions return. */
function text(value: unknown): string {
  if (typeof value !== "string") throw new Error(`expected text from DuckDB's catalog, got ${typeof value}`);
  return value;
}

interface ViewColumn {
  readonly name: string;
  readonly type: string;
  readonly comment: string | null;
}

async function viewColumns(con: DuckDBConnection, view: string): Promise<ViewColumn[]> {
  const read = await con.runAndReadAll(
    `SELECT column_name, data_type, comment FROM duckdb_columns()
     WHERE schema_name = 'hx' AND table_name = ${quote(view)} ORDER BY column_index`,
  );
  return read.getRowsJS().map(([name, type, comment]) => ({
    name: text(name),
    type: text(type),
    comment: typeof comment === "string" ? comment : null,
  }));
}

/**
 * Recreates each hx view whose stored definition `rewrite` changes, keeping its comments
 * (a recreated view loses them). Refuses a rewrite that changes a view's columns (names and
 * types): the views are the catalog's interface.
 */
export async function rewriteStoredViews(
  con: DuckDBConnection,
  rewrite: (view: string, sql: string) => string,
): Promise<void> {
  const views = (
    await con.runAndReadAll(
      "SELECT view_name, sql, comment FROM duckdb_views() WHERE schema_name = 'hx' AND NOT internal ORDER BY view_name",
    )
  ).getRowsJS();
  for (const [name, sql, comment] of views) {
    const view = text(name);
    const rewritten = rewrite(view, text(sql));
    if (rewritten === sql) continue;
    const before = await viewColumns(con, view);
    await con.run(rewritten.replace(/^CREATE VIEW /, "CREATE OR REPLACE VIEW "));
    const after = await viewColumns(con, view);
    const shape = (cols: ViewColumn[]) => cols.map((c) => `${c.name} ${c.type}`).join(", ");
    if (shape(after) !== shape(before))
      throw new Error(
        `hx.${view}: the rewrite changed its columns from (${shape(before)}) to (${shape(after)})`,
      );
    const comments = [
      ...(typeof comment === "string" ? [`COMMENT ON VIEW hx.${view} IS ${quote(comment)};`] : []),
      ...before.flatMap((c) =>
        c.comment === null ? [] : [`COMMENT ON COLUMN hx.${view}."${c.name}" IS ${quote(c.comment)};`],
      ),
    ];
    if (comments.length > 0) await con.run(comments.join("\n"));
  }
}
