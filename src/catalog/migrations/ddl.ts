/**
 * SQL builders for migrations: a table or view and its comments in one declaration, so no
 * column can be created without one. Released migrations depend on this output: change
 * it only in ways that leave the SQL of existing migrations identical.
 */

/** [name, SQL type and constraints, comment]. */
export type ColumnDef = readonly [name: string, type: string, comment: string];

export function quote(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** CREATE TABLE with COMMENT ON TABLE and COMMENT ON COLUMN for every column. */
export function table(
  name: string,
  comment: string,
  columns: readonly ColumnDef[],
  constraints: readonly string[] = [],
): string {
  const body = [
    ...columns.map(([column, type]) => `  ${column} ${type}`),
    ...constraints.map((c) => `  ${c}`),
  ];
  return [
    `CREATE TABLE ${name} (\n${body.join(",\n")}\n);`,
    `COMMENT ON TABLE ${name} IS ${quote(comment)};`,
    ...columns.map(([column, , text]) => `COMMENT ON COLUMN ${name}.${column} IS ${quote(text)};`),
  ].join("\n");
}

/**
 * CREATE VIEW with its comment and comments for the columns it names or derives. Columns
 * passed through from the kind's tables take their comments from there (see
 * inheritViewComments in the migration runner).
 */
export function view(
  name: string,
  comment: string,
  select: string,
  columns: readonly ColumnDef[] = [],
): string {
  return [
    `CREATE VIEW ${name} AS\n${select.trim()};`,
    `COMMENT ON VIEW ${name} IS ${quote(comment)};`,
    ...columns.map(([column, , text]) => `COMMENT ON COLUMN ${name}.${column} IS ${quote(text)};`),
  ].join("\n");
}
