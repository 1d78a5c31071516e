/**
 * What `natsmon backup` learns before streaming any row, all through `db.query` (read-only
 * SELECTs over DuckDB's metadata functions): the epoch window pinned to the newest folded
 * epoch, the backup set with each table's DDL and comments, and the hx views.
 */
import type { NatsConnection } from "@nats-io/nats-core";
import { parseDuration } from "../config/index.ts";
import type { SystemSubjects } from "../protocol/index.ts";

/** One table to copy: where it lives, how to create it, its comments, the server's row estimate. */
export interface PlannedTable {
  readonly schema: string;
  readonly name: string;
  readonly ddl: string;
  readonly comment: string | null;
  readonly columnComments: readonly { column: string; comment: string }[];
  readonly estimatedRows: number;
}

export interface PlannedView {
  readonly schema: string;
  readonly name: string;
  readonly ddl: string;
  readonly comment: string | null;
  readonly columnComments: readonly { column: string; comment: string }[];
}

/** The window sent with every request: RFC 3339, both inclusive, either absent. */
export interface EpochWindow {
  readonly start?: string;
  readonly end?: string;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * A --since/--until value: an RFC 3339 timestamp (kept as given), or a duration such as
 * `24h` or `90m` meaning that long before `now`. Throws a message for a person otherwise.
 */
export function resolveTime(flag: string, text: string, now: Date): string {
  if (RFC3339.test(text) && !Number.isNaN(Date.parse(text))) return text;
  const ms = parseDuration(text);
  if (ms !== undefined) return new Date(now.getTime() - ms).toISOString();
  throw new Error(
    `${flag} must be an RFC 3339 timestamp (2026-11-22T11:00:00Z) or a duration before now (24h, 90m); got ${text}`,
  );
}

/** The tables of the backup set, as the server defines it (src/catalog/backup.ts). */
const BACKUP_SET = `database_name = current_database() AND NOT internal AND NOT temporary
  AND ((schema_name = 'hx' AND table_name <> 'migrations') OR (schema_name = 'main' AND table_name = 'ips'))`;

/** Runs one read-only statement over db.query and returns its rows. */
export async function queryRows(
  nc: NatsConnection,
  subjects: SystemSubjects,
  sql: string,
  params: readonly unknown[] = [],
  timeoutMs = 60_000,
): Promise<Record<string, unknown>[]> {
  let reply;
  try {
    reply = await nc.request(subjects.dbQuery, JSON.stringify({ sql, params }), { timeout: timeoutMs });
  } catch (err) {
    if ((err as { isNoResponders?: () => boolean }).isNoResponders?.()) {
      throw new Error(
        `no catalog answers for ${subjects.dbQuery}; natsmon systems lists the reachable systems`,
        {
          cause: err,
        },
      );
    }
    throw err;
  }
  const code = reply.headers?.get("Nats-Service-Error-Code");
  if (code)
    throw new Error(`db.query answered ${code}: ${reply.headers?.get("Nats-Service-Error") ?? "error"}`);
  return reply.json<Record<string, unknown>[]>();
}

/**
 * Pins the window's end to the newest epoch folded at or before `until`, so that every
 * table is cut at the same epoch even while the node goes on folding during the backup.
 * With no epoch in the window the end is `until`, or `now` when there is none, for the
 * same reason.
 */
export async function pinWindow(
  nc: NatsConnection,
  subjects: SystemSubjects,
  window: { since?: string; until?: string },
  now: Date,
): Promise<EpochWindow & { epochs: number }> {
  const params: string[] = [];
  const conditions: string[] = [];
  if (window.since !== undefined) conditions.push(`epoch >= $${params.push(window.since)}::TIMESTAMPTZ`);
  if (window.until !== undefined) conditions.push(`epoch <= $${params.push(window.until)}::TIMESTAMPTZ`);
  const [row] = await queryRows(
    nc,
    subjects,
    `SELECT strftime(max(epoch), '%Y-%m-%dT%H:%M:%S.%fZ') AS newest, count(*) AS epochs FROM hx.epochs
      ${conditions.length > 0 ? `WHERE ${conditions.join(" AND ")}` : ""}`,
    params,
  );
  const newest = typeof row?.newest === "string" ? row.newest : undefined;
  const end = newest ?? window.until ?? now.toISOString();
  return {
    ...(window.since !== undefined ? { start: window.since } : {}),
    end,
    epochs: Number(row?.epochs ?? 0),
  };
}

/** The backup set with DDL and comments, and the hx views, in name order. */
export async function planBackup(
  nc: NatsConnection,
  subjects: SystemSubjects,
): Promise<{ tables: PlannedTable[]; views: PlannedView[] }> {
  const tables = await queryRows(
    nc,
    subjects,
    `SELECT schema_name, table_name, sql, comment, estimated_size FROM duckdb_tables()
      WHERE ${BACKUP_SET} ORDER BY schema_name, table_name`,
  );
  const views = await queryRows(
    nc,
    subjects,
    `SELECT schema_name, view_name, sql, comment FROM duckdb_views()
      WHERE database_name = current_database() AND NOT internal AND NOT temporary AND schema_name IN ('hx', 'main')
      ORDER BY schema_name, view_name`,
  );
  const comments = await queryRows(
    nc,
    subjects,
    `SELECT schema_name, table_name, column_name, comment FROM duckdb_columns()
      WHERE database_name = current_database() AND schema_name IN ('hx', 'main') AND comment IS NOT NULL
      ORDER BY schema_name, table_name, column_index`,
  );
  const columnComments = (schema: unknown, table: unknown) =>
    comments
      .filter((c) => c.schema_name === schema && c.table_name === table)
      .map((c) => ({ column: String(c.column_name), comment: String(c.comment) }));
  return {
    tables: tables.map((t) => ({
      schema: String(t.schema_name),
      name: String(t.table_name),
      ddl: String(t.sql),
      comment: typeof t.comment === "string" ? t.comment : null,
      columnComments: columnComments(t.schema_name, t.table_name),
      estimatedRows: Number(t.estimated_size ?? 0),
    })),
    views: views.map((v) => ({
      schema: String(v.schema_name),
      name: String(v.view_name),
      ddl: String(v.sql),
      comment: typeof v.comment === "string" ? v.comment : null,
      columnComments: columnComments(v.schema_name, v.view_name),
    })),
  };
}

function quote(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

function ident(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** COMMENT ON statements restoring a table's or view's comments. */
export function commentStatements(
  kind: "TABLE" | "VIEW",
  object: {
    schema: string;
    name: string;
    comment: string | null;
    columnComments: PlannedTable["columnComments"];
  },
): string {
  const name = `${ident(object.schema)}.${ident(object.name)}`;
  return [
    ...(object.comment !== null ? [`COMMENT ON ${kind} ${name} IS ${quote(object.comment)};`] : []),
    ...object.columnComments.map(
      (c) => `COMMENT ON COLUMN ${name}.${ident(c.column)} IS ${quote(c.comment)};`,
    ),
  ].join("\n");
}

/** CREATE SCHEMA for every schema the tables live in (main exists already). */
export function schemaStatements(tables: readonly PlannedTable[]): string {
  return [...new Set(tables.map((t) => t.schema))]
    .filter((s) => s !== "main")
    .map((s) => `CREATE SCHEMA IF NOT EXISTS ${ident(s)};`)
    .join("\n");
}
