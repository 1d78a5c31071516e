/**
 * The backup set and the SQL of db.backup.stream (spec: db.backup.stream): which tables a
 * client may copy, and the statement that reads one table's rows for an epoch window.
 *
 * The backup set is every base table of `hx` except `hx.migrations`, plus `main.ips`; views
 * are refused (they hold no rows, and the client recreates them from their definition).
 *
 * Window semantics, with `start_epoch` and `end_epoch` both inclusive and either optional:
 *   - A table with an `epoch` column (the _stats tables, hx.epochs, hx.subscription_stats,
 *     …) keeps the rows whose epoch lies in the window.
 *   - An _ident table keeps the identities the window's rows refer to: the kind's own
 *     _stats rows in the window, and every column of another backed-up row that holds the
 *     kind's pk (`leader_server_pk`, consumer_ident.stream_pk, …, found by name as
 *     retention finds them), followed through other _ident tables transitively (a consumer
 *     in the window keeps its stream, a connection keeps its server).
 *   - An _opts table keeps, for those identities, the row in force at `start_epoch` (the
 *     newest at or before it) and every later row up to `end_epoch`, so each backed-up
 *     stats row still finds the configuration in force at its epoch.
 *   - A table with no `epoch` column that is neither _ident nor _opts, `main.ips` among
 *     them, is copied whole: the spec ignores both bounds for it (its first_epoch and
 *     last_epoch are facts about each address, not an epoch to cut on).
 * Without either bound every table is copied whole.
 */
import type { DuckDBConnection } from "@duckdb/node-api";
import { BadRequestError } from "../domain/index.ts";
import type { Catalog } from "./open-catalog.ts";
import { entityKinds, pkReferences, type KindTables, type PkReference } from "./retention.ts";
import { parseEpochBound } from "./epoch-bound.ts";

/** One table of the backup set, as the schema shows it. */
export interface BackupTable {
  readonly schema: "hx" | "main";
  readonly name: string;
  readonly hasEpoch: boolean;
}

/** What the SQL builder needs to know about the catalog's schema; it changes only with migrations. */
export interface BackupSchema {
  /** Keyed by `schema.name`, in name order. */
  readonly tables: ReadonlyMap<string, BackupTable>;
  readonly kinds: readonly KindTables[];
  readonly references: readonly PkReference[];
}

/** The request fields the SQL depends on (wire names are mapped in api/). */
export interface BackupRequest {
  readonly schema: string;
  readonly table: string;
  readonly startEpoch?: string | undefined;
  readonly endEpoch?: string | undefined;
}

/** A server-built statement: run trusted (no read-only guard) and without a row cap. */
export interface BackupStatement {
  readonly sql: string;
  readonly params: readonly string[];
}

/** Reads the backup set, the entity kinds and the pk references from DuckDB's metadata. */
export async function describeBackupSchema(con: DuckDBConnection): Promise<BackupSchema> {
  const found = await con.runAndReadAll(
    `SELECT t.schema_name, t.table_name,
            EXISTS (SELECT 1 FROM duckdb_columns() c
                     WHERE c.database_name = t.database_name AND c.schema_name = t.schema_name
                       AND c.table_name = t.table_name AND c.column_name = 'epoch') AS has_epoch
       FROM duckdb_tables() t
      WHERE t.database_name = current_database() AND NOT t.internal AND NOT t.temporary
        AND ((t.schema_name = 'hx' AND t.table_name <> 'migrations')
          OR (t.schema_name = 'main' AND t.table_name = 'ips'))
      ORDER BY t.schema_name, t.table_name`,
  );
  const tables = new Map<string, BackupTable>();
  for (const [schema, name, hasEpoch] of found.getRowsJS() as ["hx" | "main", string, boolean][]) {
    tables.set(`${schema}.${name}`, { schema, name, hasEpoch });
  }
  const kinds = await entityKinds(con);
  return { tables, kinds, references: await pkReferences(con, kinds) };
}

/** Each open catalog's backup schema, read once: only migrations change it, and they run at open. */
const described = new WeakMap<Catalog, Promise<BackupSchema>>();

/**
 * The statement of one db.backup.stream request on `catalog` (see backupStatement). The
 * schema is read on a query connection, so a refusal answers at once even while another
 * backup holds the backup connection.
 */
export async function backupStatementFor(
  catalog: Catalog,
  request: BackupRequest,
  signal?: AbortSignal,
): Promise<BackupStatement> {
  let schema = described.get(catalog);
  if (!schema) {
    schema = catalog.withReader((con) => describeBackupSchema(con), signal);
    described.set(catalog, schema);
    // A failed read (the catalog closing, say) is not remembered.
    schema.catch(() => described.delete(catalog));
  }
  return backupStatement(await schema, request);
}

/** The names of the backup set, for messages and for clients. */
export function backupTableNames(schema: BackupSchema): string[] {
  return [...schema.tables.keys()];
}

/**
 * The statement streaming one table of the backup set for the request's window. Throws
 * BadRequestError (400) for a table outside the set, a timestamp that is not RFC 3339 or
 * lies outside the years DuckDB reads (EPOCH_BOUND_RANGE), or a window whose start is after
 * its end.
 */
export function backupStatement(schema: BackupSchema, request: BackupRequest): BackupStatement {
  const table = schema.tables.get(`${request.schema}.${request.table}`);
  if (!table) throw new BadRequestError(refusal(schema, request));
  const start = bound("start_epoch", request.startEpoch, "start");
  const end = bound("end_epoch", request.endEpoch, "end");
  if (start !== undefined && end !== undefined && start.micros > end.micros) {
    throw new BadRequestError(
      `start_epoch ${request.startEpoch} is after end_epoch ${request.endEpoch} at the microsecond the ` +
        "catalog keeps (a start rounds up, an end down)",
    );
  }
  const whole: BackupStatement = { sql: `SELECT * FROM ${table.schema}.${table.name}`, params: [] };
  if (start === undefined && end === undefined) return whole;

  const params: string[] = [];
  const param = (text: string): string => {
    params.push(text);
    return `$${params.length}::TIMESTAMPTZ`;
  };
  const window = { start: start && param(start.text), end: end && param(end.text) };
  const sql = new WindowSql(schema, window).forTable(table);
  // Unused parameters would fail to bind: a table the window does not cut gets none.
  return sql === undefined ? whole : { sql, params };
}

function refusal(schema: BackupSchema, request: BackupRequest): string {
  const name = `${request.schema}.${request.table}`;
  const why =
    name === "hx.migrations"
      ? "hx.migrations is not backed up (a backup holds data, not this catalog's schema history)"
      : `${name} is not in the backup set`;
  return (
    `${why}: db.backup.stream copies the base tables of hx except hx.migrations, and main.ips ` +
    `(natsmon db tables lists tables and views): ${backupTableNames(schema).join(", ")}`
  );
}

function bound(
  field: string,
  text: string | undefined,
  side: "start" | "end",
): { micros: bigint; text: string } | undefined {
  if (text === undefined) return undefined;
  const parsed = parseEpochBound(text, side);
  if (!parsed.ok) throw new BadRequestError(`${field} ${parsed.problem}`);
  return parsed;
}

/** Builds the SQL of one windowed table; the bounds are SQL expressions (parameters). */
class WindowSql {
  private readonly ctes = new Map<string, string>();
  private readonly kindOfTable = new Map<string, { kind: KindTables; role: "ident" | "opts" | "stats" }>();

  private readonly schema: BackupSchema;
  private readonly window: { start: string | undefined; end: string | undefined };

  constructor(schema: BackupSchema, window: { start: string | undefined; end: string | undefined }) {
    this.schema = schema;
    this.window = window;
    for (const kind of schema.kinds) {
      for (const role of ["ident", "opts", "stats"] as const) {
        this.kindOfTable.set(`${kind.name}_${role}`, { kind, role });
      }
    }
  }

  /** The table's rows in the window, or undefined when the window does not apply to it (copied whole). */
  forTable(table: BackupTable): string | undefined {
    const owner = table.schema === "hx" ? this.kindOfTable.get(table.name) : undefined;
    let body: string;
    if (owner?.role === "ident") {
      body = `SELECT * FROM hx.${table.name} WHERE ${owner.kind.pk} IN (SELECT pk FROM ${this.scope(owner.kind)})`;
    } else if (owner?.role === "opts") {
      body = this.opts(owner.kind);
    } else if (table.hasEpoch) {
      body = `SELECT * FROM ${table.schema}.${table.name} WHERE ${this.inWindow("epoch")}`;
    } else {
      return undefined;
    }
    return this.ctes.size === 0 ? body : `WITH ${[...this.ctes.values()].join(",\n")}\n${body}`;
  }

  private inWindow(column: string): string {
    const { start, end } = this.window;
    return [start && `${column} >= ${start}`, end && `${column} <= ${end}`].filter(Boolean).join(" AND ");
  }

  private opts(kind: KindTables): string {
    const { start, end } = this.window;
    const pk = kind.pk;
    const conditions = [`o.${pk} IN (SELECT pk FROM ${this.scope(kind)})`];
    if (end) conditions.push(`o.epoch <= ${end}`);
    if (start) {
      // The row in force at the start, or the start itself when the entity appeared later.
      conditions.push(
        `o.epoch >= coalesce((SELECT max(p.epoch) FROM hx.${kind.name}_opts p
                               WHERE p.${pk} = o.${pk} AND p.epoch <= ${start}), ${start})`,
      );
    }
    return `SELECT o.* FROM hx.${kind.name}_opts o WHERE ${conditions.join(" AND ")}`;
  }

  /**
   * The name of a CTE with column `pk`: the identities of `kind` the window refers to.
   * CTEs of the kinds whose _ident rows refer to this one are added first. A reference
   * cycle through _ident tables (none in today's schema) is cut by taking the whole
   * _ident table of the kind met again: a superset, never a missing identity.
   */
  private scope(kind: KindTables, visiting = new Set<string>()): string {
    const name = `scope_${kind.name}`;
    if (this.ctes.has(name)) return name;
    visiting.add(kind.name);
    const sources = [`SELECT ${kind.pk} FROM hx.${kind.name}_stats WHERE ${this.inWindow("epoch")}`];
    for (const ref of this.schema.references) {
      if (ref.kind !== kind.name) continue;
      const col = ref.column;
      const owner = this.kindOfTable.get(ref.table);
      const table = this.schema.tables.get(`hx.${ref.table}`);
      if (owner?.role === "ident") {
        const other = owner.kind;
        sources.push(
          visiting.has(other.name)
            ? `SELECT ${col} FROM hx.${ref.table}`
            : `SELECT ${col} FROM hx.${ref.table} WHERE ${other.pk} IN (SELECT pk FROM ${this.scope(other, visiting)})`,
        );
      } else if (owner?.role === "opts") {
        const other = owner.kind;
        sources.push(
          visiting.has(other.name)
            ? `SELECT ${col} FROM hx.${ref.table}`
            : `SELECT ${col} FROM (${this.opts(other)})`,
        );
      } else if (table?.hasEpoch) {
        sources.push(`SELECT ${col} FROM hx.${ref.table} WHERE ${this.inWindow("epoch")}`);
      } else if (table) {
        sources.push(`SELECT ${col} FROM hx.${ref.table}`);
      }
    }
    visiting.delete(kind.name);
    this.ctes.set(
      name,
      `${name} AS (\n  SELECT DISTINCT pk FROM (\n    ${sources.join("\n    UNION ALL ")}\n  ) AS refs(pk) WHERE pk IS NOT NULL\n)`,
    );
    return name;
  }
}
