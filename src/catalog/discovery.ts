/**
 * Catalog discovery (spec: db.schemas, db.tables, db.columns, db.macros): reads DuckDB's
 * own metadata functions only (duckdb_schemas, duckdb_tables, duckdb_views, duckdb_columns,
 * duckdb_functions), never a table's rows, and only for the allowlisted schemas of this
 * catalog's database.
 */
import type { DuckDBConnection, DuckDBValue } from "@duckdb/node-api";
import { NotFoundError, QueryTimeoutError } from "../domain/index.ts";
import {
  DISCOVERY_SCHEMAS,
  type ColumnsReply,
  type DiscoverySchema,
  type MacroEntry,
  type MacrosReply,
  type SchemasReply,
  type TableEntry,
  type TablesReply,
} from "../protocol/index.ts";
import type { Catalog } from "./open-catalog.ts";

/** DuckDB cannot comment a schema, so the descriptions live here. */
const SCHEMA_DESCRIPTIONS: Readonly<Record<DiscoverySchema, string>> = {
  hx: "History: one row per entity per epoch (_stats), identities (_ident) and options (_opts), and views joining them",
  main: "Shared tables outside the epochs: IP address lookups (ips) and page views recorded with usage.record (page_views)",
  checks: "One table macro per check; code server-001 is checks.server_001",
  contexts: "Table macros behind the supporting context panels of findings",
};

/** `schema_name IN (…)` over the allowlist; the names are constants, not input. */
const ALLOWED = `(${DISCOVERY_SCHEMAS.map((s) => `'${s}'`).join(", ")})`;
/** Objects of this catalog's own database (not the system or temp ones), user-defined. */
const OWN = "database_name = current_database() AND NOT internal";

export async function listSchemas(catalog: Catalog, timeoutMs: number): Promise<SchemasReply> {
  const rows = await read(
    catalog,
    timeoutMs,
    `SELECT s.schema_name AS name,
            (SELECT count(*) FROM duckdb_tables() t WHERE t.${OWN} AND t.schema_name = s.schema_name)::INTEGER AS tables,
            (SELECT count(*) FROM duckdb_views() v WHERE v.${OWN} AND v.schema_name = s.schema_name)::INTEGER AS views,
            (SELECT count(DISTINCT function_name) FROM duckdb_functions() f
              WHERE f.${OWN} AND f.schema_name = s.schema_name
                AND f.function_type IN ('macro', 'table_macro'))::INTEGER AS macros
       FROM duckdb_schemas() s
      WHERE s.database_name = current_database() AND s.schema_name IN ${ALLOWED}`,
  );
  const order = (name: unknown) => (DISCOVERY_SCHEMAS as readonly unknown[]).indexOf(name);
  return {
    schemas: rows
      .sort((a, b) => order(a.name) - order(b.name))
      .map((r) => ({
        name: String(r.name),
        description: SCHEMA_DESCRIPTIONS[r.name as DiscoverySchema],
        tables: Number(r.tables),
        views: Number(r.views),
        macros: Number(r.macros),
      })),
  };
}

const TABLES_SQL = `
  SELECT schema_name AS schema, table_name AS name, 'table' AS type, comment,
         column_count::INTEGER AS column_count, estimated_size::BIGINT AS estimated_rows
    FROM duckdb_tables() WHERE ${OWN} AND NOT temporary AND schema_name IN ${ALLOWED}
  UNION ALL
  SELECT schema_name, view_name, 'view', comment, column_count::INTEGER, NULL
    FROM duckdb_views() WHERE ${OWN} AND NOT temporary AND schema_name IN ${ALLOWED}`;

export async function listTables(
  catalog: Catalog,
  timeoutMs: number,
  schema?: DiscoverySchema,
): Promise<TablesReply> {
  const rows = await read(
    catalog,
    timeoutMs,
    `SELECT * FROM (${TABLES_SQL}) WHERE $1::VARCHAR IS NULL OR schema = $1 ORDER BY schema, name`,
    [schema ?? null],
  );
  return { tables: rows.map(tableEntry) };
}

function tableEntry(r: Record<string, DuckDBValue>): TableEntry {
  return {
    schema: String(r.schema),
    name: String(r.name),
    type: r.type === "view" ? "view" : "table",
    comment: textOrNull(r.comment),
    column_count: Number(r.column_count),
    estimated_rows: r.estimated_rows === null ? null : Number(r.estimated_rows),
  };
}

export async function listColumns(
  catalog: Catalog,
  timeoutMs: number,
  schema: DiscoverySchema,
  table: string,
): Promise<ColumnsReply> {
  const [tables, columns] = await readAll(catalog, timeoutMs, [
    // DuckDB's names are case-insensitive: `hx.EPOCHS` is hx.epochs, answered under its own name.
    [`SELECT * FROM (${TABLES_SQL}) WHERE schema = $1 AND lower(name) = lower($2)`, [schema, table]],
    [
      `SELECT column_name AS name, column_index::INTEGER AS position, data_type, is_nullable AS nullable,
              column_default AS "default", comment
         FROM duckdb_columns()
        WHERE ${OWN} AND schema_name = $1 AND lower(table_name) = lower($2)
        ORDER BY column_index`,
      [schema, table],
    ],
  ]);
  const found = tables?.[0];
  if (!found) throw new NotFoundError(`no table or view ${schema}.${table}; db.tables lists them`);
  const entry = tableEntry(found);
  return {
    schema: entry.schema,
    table: entry.name,
    type: entry.type,
    comment: entry.comment,
    columns: (columns ?? []).map((c) => ({
      name: String(c.name),
      position: Number(c.position),
      data_type: String(c.data_type),
      nullable: c.nullable === true,
      default: textOrNull(c.default),
      comment: textOrNull(c.comment),
    })),
  };
}

/**
 * The defaults of macros' optional parameters by macro (`schema.name`), in parameter
 * order: DuckDB's metadata lists a defaulted parameter by name only.
 */
export type MacroDefaults = ReadonlyMap<string, readonly { name: string; default: string }[]>;

export async function listMacros(
  catalog: Catalog,
  timeoutMs: number,
  schema?: DiscoverySchema,
  defaults: MacroDefaults = new Map(),
): Promise<MacrosReply> {
  const rows = await read(
    catalog,
    timeoutMs,
    `SELECT schema_name AS schema, function_name AS name, function_type AS type, comment,
            parameters, parameter_types, macro_definition AS definition
       FROM duckdb_functions()
      WHERE ${OWN} AND function_type IN ('macro', 'table_macro') AND schema_name IN ${ALLOWED}
        AND ($1::VARCHAR IS NULL OR schema_name = $1)
      ORDER BY schema_name, function_name, len(parameters)`,
    [schema ?? null],
  );
  return { macros: rows.map((r) => macroEntry(r, defaults)) };
}

function macroEntry(r: Record<string, DuckDBValue>, defaults: MacroDefaults): MacroEntry {
  const schema = String(r.schema);
  const name = String(r.name);
  const known = defaults.get(`${schema}.${name}`) ?? [];
  const names = listOf(r.parameters);
  const types = listOf(r.parameter_types);
  const parameters = names.map((param, i) => {
    const fallback = known.find((d) => d.name === String(param))?.default;
    return {
      name: String(param),
      type: textOrNull(types[i]),
      ...(fallback === undefined ? {} : { default: fallback }),
    };
  });
  const args = parameters
    .map(
      (p) => `${p.type ? `${p.name} ${p.type}` : p.name}${p.default === undefined ? "" : ` := ${p.default}`}`,
    )
    .join(", ");
  return {
    schema,
    name,
    type: r.type === "table_macro" ? "table" : "scalar",
    comment: textOrNull(r.comment),
    parameters,
    signature: `${schema}.${name}(${args})`,
    definition: textOrNull(r.definition),
  };
}

function listOf(value: DuckDBValue | undefined): readonly DuckDBValue[] {
  return value !== null && typeof value === "object" && "items" in value && Array.isArray(value.items)
    ? (value.items as DuckDBValue[])
    : [];
}

function textOrNull(value: DuckDBValue | undefined): string | null {
  return value === null || value === undefined ? null : String(value);
}

type Statement = readonly [sql: string, params?: readonly (string | null)[]];

function read(
  catalog: Catalog,
  timeoutMs: number,
  sql: string,
  params?: readonly (string | null)[],
): Promise<Record<string, DuckDBValue>[]> {
  return readAll(catalog, timeoutMs, [[sql, params]]).then(([rows]) => rows ?? []);
}

/**
 * Runs metadata statements on one read connection. Waiting for the connection is bounded by
 * `timeoutMs` (408); the statements read in-memory catalog entries and do not scan data.
 */
async function readAll(
  catalog: Catalog,
  timeoutMs: number,
  statements: readonly Statement[],
): Promise<Record<string, DuckDBValue>[][]> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    return await catalog.withReader(async (con: DuckDBConnection) => {
      const out: Record<string, DuckDBValue>[][] = [];
      for (const [sql, params] of statements) {
        const reader = await con.runAndReadAll(sql, params ? [...params] : undefined);
        out.push(reader.getRowObjects());
      }
      return out;
    }, signal);
  } catch (err) {
    if (signal.aborted && !catalog.closing) {
      throw new QueryTimeoutError(`no read connection came free within db.query-timeout (${timeoutMs} ms)`, {
        cause: err,
      });
    }
    throw err;
  }
}
