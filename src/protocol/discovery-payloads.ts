/** Wire payloads of the catalog discovery endpoints: db.explain, db.schemas, db.tables, db.columns, db.macros. */

/**
 * `db.explain` request (spec: db.explain). The statement must pass the read-only rule of
 * db.query; `params` bind as in db.query. `analyze` true runs EXPLAIN ANALYZE (executes the
 * query, bound by db.query-timeout); false or absent only plans.
 */
export interface ExplainRequest {
  sql: string;
  params?: unknown[];
  analyze?: boolean;
}

/**
 * `db.explain` reply: the rows EXPLAIN returns, keyed by DuckDB's column names
 * (`explain_key` is `physical_plan`, or `analyzed_plan` with analyze; `explain_value` is the
 * rendered plan text). A statement that is refused or does not parse or bind is a 400, so
 * `valid` is always true in a reply.
 */
export interface ExplainReply {
  valid: true;
  plan: { explain_key: string; explain_value: string }[];
}

/**
 * The schemas db.schemas, db.tables, db.columns and db.macros list, in listing order (spec:
 * db.explain, db.schemas…). db.explain is not held to them: it plans any statement db.query
 * would run, under the same read-only guard.
 */
export const DISCOVERY_SCHEMAS = ["hx", "main", "checks", "contexts"] as const;
export type DiscoverySchema = (typeof DISCOVERY_SCHEMAS)[number];

/** `db.schemas` request: `{}`. Reply: each allowlisted schema the catalog has. */
export interface SchemasReply {
  schemas: {
    name: string;
    description: string;
    tables: number;
    views: number;
    macros: number;
  }[];
}

/** `db.tables` request: `{schema?}`; without `schema`, every allowlisted schema. */
export interface TablesRequest {
  schema?: string;
}

/** One table or view in a `db.tables` reply, ordered by schema then name. */
export interface TableEntry {
  schema: string;
  name: string;
  type: "table" | "view";
  comment: string | null;
  column_count: number;
  /** DuckDB's row estimate from metadata (no scan); null for a view. */
  estimated_rows: number | null;
}

export interface TablesReply {
  tables: TableEntry[];
}

/** `db.columns` request: both fields required; 404 when no such table or view. */
export interface ColumnsRequest {
  schema: string;
  table: string;
}

/** `db.columns` reply: the table's comment and its columns in position order. */
export interface ColumnsReply {
  schema: string;
  table: string;
  type: "table" | "view";
  comment: string | null;
  columns: {
    name: string;
    /** 1-based. */
    position: number;
    data_type: string;
    nullable: boolean;
    default: string | null;
    comment: string | null;
  }[];
}

/** `db.macros` request: `{schema?}`; without `schema`, every allowlisted schema. */
export interface MacrosRequest {
  schema?: string;
}

/**
 * One macro overload in a `db.macros` reply (an overloaded macro has one entry per
 * overload), ordered by schema then name. `type` `table` is a table macro (`FROM
 * checks.server_001(…)`), `scalar` an expression macro. Parameter types are null where the
 * macro does not declare them. An optional parameter carries its `default` (SQL text) where
 * natsmon installed the macro (every check macro's thresholds); DuckDB's metadata does not
 * keep defaults for others.
 */
export interface MacroEntry {
  schema: string;
  name: string;
  type: "table" | "scalar";
  comment: string | null;
  parameters: { name: string; type: string | null; default?: string }[];
  /** e.g. `checks.consumer_002(ep_from, ep_to, p_max_lag := 300)`. */
  signature: string;
  /** The macro body as DuckDB prints it. */
  definition: string | null;
}

export interface MacrosReply {
  macros: MacroEntry[];
}
