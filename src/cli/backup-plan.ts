/**
 * What `natsmon backup` learns before streaming any row, all through `db.query` (read-only
 * SELECTs over DuckDB's metadata functions): the epoch window pinned to the newest folded
 * epoch, the backup set with each table's DDL and comments, and the hx views.
 */
import { errors, type NatsConnection } from "@nats-io/nats-core";
import { EPOCH_BOUND_RANGE, EPOCH_TEXT_FORMAT, parseEpochBound } from "../catalog/index.ts";
import { parseDuration } from "../config/index.ts";
import type { SystemSubjects } from "../protocol/index.ts";
import { NoResponderError } from "./stream-client.ts";

/** One table to copy: where it lives, how to create it, its comments, the server's row estimate. */
export interface PlannedTable {
  readonly schema: string;
  readonly name: string;
  readonly ddl: string;
  readonly comment: string | null;
  readonly columnComments: readonly { column: string; comment: string }[];
  readonly estimatedRows: number;
  /**
   * Whether the window cuts the table (spec: db.backup.stream): it has an `epoch` column, or
   * is an hx `_ident` table, scoped by what the window's rows refer to. The others (main.ips)
   * are copied whole whatever the window.
   */
  readonly cutByWindow: boolean;
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

/** The window as pinned at planning time. */
export interface PinnedWindow extends EpochWindow {
  /** Epochs folded in the window when it was pinned. */
  readonly epochs: number;
  /**
   * No epoch lay in the window: every table it cuts is backed up empty, without asking, so
   * that an epoch folded during the backup cannot reach the tables copied after it.
   */
  readonly empty: boolean;
  /** The newest hx.epochs.marker_seq at pinning (text: UBIGINT), whatever the window. */
  readonly seq?: string;
  /** The node's oldest epoch at pinning: a newer one after the copy means retention ran. */
  readonly oldest?: string;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

/**
 * A --since/--until value: an RFC 3339 timestamp (kept as given, but for its letters), or a
 * duration such as `24h` or `90m` meaning that long before `now`. Throws a message for a
 * person otherwise.
 */
export function resolveTime(flag: string, text: string, now: Date): string {
  const fields = RFC3339.exec(text);
  let resolved: string | undefined;
  if (fields) {
    // Date.parse rolls an impossible date over (February 30th becomes March 2nd), so the
    // server would be asked for a window the user never named.
    const problem = calendarProblem(fields);
    if (problem) throw new Error(`${flag} ${text} is not a real date and time: ${problem}`);
    // RFC 3339 allows a lower-case `t` and `z`; DuckDB's cast, which the planning query
    // uses, does not. They are the only letters a timestamp holds.
    resolved = text.toUpperCase();
  } else {
    const ms = parseDuration(text);
    if (ms !== undefined) {
      const back = now.getTime() - ms;
      if (!(back >= Date.parse(EPOCH_BOUND_RANGE.first))) {
        throw new Error(`${flag} ${text} before now is earlier than ${EPOCH_BOUND_RANGE.first}`);
      }
      resolved = new Date(back).toISOString();
    }
  }
  if (resolved === undefined) {
    throw new Error(
      `${flag} must be an RFC 3339 timestamp (2026-11-22T11:00:00Z) or a duration before now (24h, 90m); got ${text}`,
    );
  }
  // The server refuses an instant DuckDB cannot cast (year 10000 once in UTC); say so first.
  const bound = parseEpochBound(resolved, flag === "--since" ? "start" : "end");
  if (!bound.ok) throw new Error(`${flag} ${bound.problem}`);
  return resolved;
}

/** Why the fields of an RFC 3339 timestamp name no instant, or undefined when they do. */
function calendarProblem(fields: RegExpExecArray): string | undefined {
  const [, year, month, day, hour, minute, second, offsetHour, offsetMinute] = fields;
  const n = Number;
  if (n(month) < 1 || n(month) > 12) return `there is no month ${month}`;
  const days = daysInMonth(n(year), n(month));
  if (n(day) < 1 || n(day) > days) return `${year}-${month} has ${days} days`;
  if (n(hour) > 23) return `there is no hour ${hour}`;
  if (n(minute) > 59) return `there is no minute ${minute}`;
  // RFC 3339 allows second 60 for a leap second; neither JavaScript nor DuckDB keeps one.
  if (n(second) > 59) return `there is no second ${second}`;
  if (offsetHour !== undefined && (n(offsetHour) > 23 || n(offsetMinute) > 59)) {
    return `the offset ${offsetHour}:${offsetMinute} is out of range`;
  }
  return undefined;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * Why the window given cannot be backed up, for a person, or undefined when it can. Checked
 * before anything is asked or written: without --until the end is the newest epoch or now,
 * so a --since past now would reach the server as a window that ends before it starts. The
 * bounds are compared to the last digit given (Date.parse keeps milliseconds), then as the
 * node is asked for them (wireWindow), where a window inside one microsecond is empty.
 */
export function windowProblem(window: { since?: string; until?: string }, now: Date): string | undefined {
  const { since, until } = window;
  if (since === undefined) return undefined;
  const wire = wireWindow(window);
  if (until !== undefined) {
    if (compareInstants(since, until) > 0) return `--since (${since}) is after --until (${until})`;
    return wire.since! > wire.until!
      ? `no microsecond lies between --since (${since}) and --until (${until}): the catalog keeps ` +
          "epochs to the microsecond; widen the window"
      : undefined;
  }
  return wire.since! > now.toISOString().replace("Z", "000Z")
    ? `--since (${since}) is in the future (now is ${now.toISOString()}); nothing to back up`
    : undefined;
}

/**
 * The window as the node is asked for it (planning query and each table's request): each
 * bound at the microsecond the catalog keeps, in UTC, the start rounded up and the end down,
 * so the window never holds an instant the one given does not. Both bounds must have passed
 * resolveTime.
 */
export function wireWindow(window: { since?: string; until?: string }): { since?: string; until?: string } {
  const wire = (text: string, side: "start" | "end") => {
    const bound = parseEpochBound(text, side);
    if (!bound.ok) throw new Error(`not a bound resolveTime passed: ${text}`);
    return bound.text;
  };
  return {
    ...(window.since !== undefined ? { since: wire(window.since, "start") } : {}),
    ...(window.until !== undefined ? { until: wire(window.until, "end") } : {}),
  };
}

/** Orders two RFC 3339 instants exactly, however many fraction digits they carry. */
function compareInstants(a: string, b: string): number {
  const floor = (text: string) => {
    const bound = parseEpochBound(text, "end");
    return bound.ok ? bound.micros : 0n;
  };
  const [ma, mb] = [floor(a), floor(b)];
  if (ma !== mb) return ma < mb ? -1 : 1;
  // The same microsecond: the digits past it decide.
  const beyond = (text: string) => (/\.\d{6}(\d+)/.exec(text)?.[1] ?? "").replace(/0+$/, "");
  const [ra, rb] = [beyond(a), beyond(b)];
  const width = Math.max(ra.length, rb.length);
  const [pa, pb] = [ra.padEnd(width, "0"), rb.padEnd(width, "0")];
  return pa === pb ? 0 : pa < pb ? -1 : 1;
}

/** What the node says once every table is copied (catalog/backup-reconcile.ts uses it). */
export interface NodeAfterCopy {
  /** Its oldest epoch now; another than at pinning means retention ran during the copy. */
  readonly oldest: string | undefined;
  /** A microsecond before `oldest`: retention's cutoff for the file; "infinity" with no epoch. */
  readonly cutoff: string;
  /** Epochs folded since the window was pinned with a start time at or before its end. */
  readonly late: readonly string[];
}

/** Asks the node, once every table is copied, what changed under the pinned window. */
export async function nodeAfterCopy(
  nc: NatsConnection,
  subjects: SystemSubjects,
  window: PinnedWindow,
  timeoutMs: number,
): Promise<NodeAfterCopy> {
  const params = [window.seq ?? "0", window.end ?? "infinity"];
  const row = await queryRow(
    nc,
    subjects,
    timeoutMs,
    `SELECT strftime(min(epoch), '${EPOCH_TEXT_FORMAT}') AS oldest,
            strftime(min(epoch) - INTERVAL 1 MICROSECOND, '${EPOCH_TEXT_FORMAT}') AS cutoff,
            (SELECT list(strftime(epoch, '${EPOCH_TEXT_FORMAT}') ORDER BY epoch) FROM hx.epochs
              WHERE marker_seq > $1::UBIGINT AND epoch <= $2::TIMESTAMPTZ) AS late
       FROM hx.epochs`,
    params,
  );
  const late = Array.isArray(row?.late) ? row.late.filter((e): e is string => typeof e === "string") : [];
  return {
    oldest: typeof row?.oldest === "string" ? row.oldest : undefined,
    cutoff: typeof row?.cutoff === "string" ? row.cutoff : "infinity",
    late,
  };
}

/** The tables of the backup set, as the server defines it (src/catalog/backup.ts). */
const BACKUP_SET = `database_name = current_database() AND NOT internal AND NOT temporary
  AND ((schema_name = 'hx' AND table_name <> 'migrations') OR (schema_name = 'main' AND table_name = 'ips'))`;

/**
 * Runs one read-only statement over db.query and returns its row; `timeoutMs` is --timeout.
 * Every planning statement answers exactly one row (aggregates; a list of structs where
 * there are many things), so no db.query-max-rows an operator sets (at least 1) can fail a
 * backup: that cap is for the buffered results people ask for. (db.query.stream would not
 * do: its own db.query-stream.max-rows is as much an operator's to lower.) The reply is one
 * message all the same, bounded by the bus's max_payload: the plan of the whole catalog
 * (some 45 tables, 1,000 commented columns) is about 200 KB, a fifth of nats-server's
 * default 1 MB.
 * Throws NoResponderError when nothing serves db.query.
 */
export async function queryRow(
  nc: NatsConnection,
  subjects: SystemSubjects,
  timeoutMs: number,
  sql: string,
  params: readonly unknown[] = [],
): Promise<Record<string, unknown> | undefined> {
  let reply;
  try {
    reply = await nc.request(subjects.dbQuery, JSON.stringify({ sql, params }), { timeout: timeoutMs });
  } catch (err) {
    if (err instanceof errors.TimeoutError) {
      throw new Error(`no answer from ${subjects.dbQuery} within ${timeoutMs} ms (--timeout)`, {
        cause: err,
      });
    }
    if ((err as { isNoResponders?: () => boolean }).isNoResponders?.()) {
      throw new NoResponderError(subjects.dbQuery);
    }
    throw err;
  }
  const code = reply.headers?.get("Nats-Service-Error-Code");
  if (code)
    throw new Error(`db.query answered ${code}: ${reply.headers?.get("Nats-Service-Error") ?? "error"}`);
  return reply.json<Record<string, unknown>[]>()[0];
}

/**
 * Pins the window's end to the newest epoch folded at or before `until`, so that every
 * table is cut at the same epoch even while the node goes on folding during the backup.
 * With no epoch in the window there is no epoch to pin to: any end (`until`, now) would let
 * in an epoch folded while the tables are copied, into the tables copied after it and not
 * into those before. Such a window is `empty`: the tables it cuts are backed up empty.
 */
export async function pinWindow(
  nc: NatsConnection,
  subjects: SystemSubjects,
  window: { since?: string; until?: string },
  now: Date,
  timeoutMs: number,
): Promise<PinnedWindow> {
  const params: string[] = [];
  const conditions: string[] = [];
  if (window.since !== undefined) conditions.push(`epoch >= $${params.push(window.since)}::TIMESTAMPTZ`);
  if (window.until !== undefined) conditions.push(`epoch <= $${params.push(window.until)}::TIMESTAMPTZ`);
  const row = await queryRow(
    nc,
    subjects,
    timeoutMs,
    // One statement, one snapshot: the folds the window admits are those up to `seq`.
    `SELECT strftime(max(epoch), '${EPOCH_TEXT_FORMAT}') AS newest, count(*) AS epochs,
            (SELECT max(marker_seq)::VARCHAR FROM hx.epochs) AS seq,
            (SELECT strftime(min(epoch), '${EPOCH_TEXT_FORMAT}') FROM hx.epochs) AS oldest
       FROM hx.epochs ${conditions.length > 0 ? `WHERE ${conditions.join(" AND ")}` : ""}`,
    params,
  );
  const newest = typeof row?.newest === "string" ? row.newest : undefined;
  return {
    ...(typeof row?.seq === "string" ? { seq: row.seq } : {}),
    ...(typeof row?.oldest === "string" ? { oldest: row.oldest } : {}),
    ...(window.since !== undefined ? { start: window.since } : {}),
    // Without an epoch the end is only shown and sent to the tables the window does not cut.
    end: newest ?? window.until ?? now.toISOString(),
    epochs: Number(row?.epochs ?? 0),
    empty: newest === undefined,
  };
}

/**
 * The backup set with DDL and comments, and the hx views, in name order: one statement, so
 * one snapshot of the schema, answering one row of three lists (queryRow says why).
 */
export async function planBackup(
  nc: NatsConnection,
  subjects: SystemSubjects,
  timeoutMs: number,
): Promise<{ tables: PlannedTable[]; views: PlannedView[] }> {
  const row = await queryRow(
    nc,
    subjects,
    timeoutMs,
    `SELECT
       (SELECT list(tbl ORDER BY tbl.schema_name, tbl.table_name) FROM (
          SELECT schema_name, table_name, sql, comment, estimated_size,
                 EXISTS (SELECT 1 FROM duckdb_columns() c
                          WHERE c.database_name = t.database_name AND c.schema_name = t.schema_name
                            AND c.table_name = t.table_name AND c.column_name = 'epoch') AS has_epoch
            FROM duckdb_tables() t
           WHERE ${BACKUP_SET}) tbl) AS tables,
       (SELECT list(vw ORDER BY vw.schema_name, vw.view_name) FROM (
          SELECT schema_name, view_name, sql, comment FROM duckdb_views()
           WHERE database_name = current_database() AND NOT internal AND NOT temporary
             AND schema_name IN ('hx', 'main')) vw) AS views,
       (SELECT list(col ORDER BY col.schema_name, col.table_name, col.column_index) FROM (
          SELECT schema_name, table_name, column_name, column_index, comment FROM duckdb_columns()
           WHERE database_name = current_database() AND schema_name IN ('hx', 'main')
             AND comment IS NOT NULL) col) AS comments`,
  );
  // An empty list aggregates to NULL.
  const rows = (value: unknown) => (Array.isArray(value) ? (value as Record<string, unknown>[]) : []);
  const [tables, views, comments] = [rows(row?.tables), rows(row?.views), rows(row?.comments)];
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
      cutByWindow:
        t.has_epoch === true || (t.schema_name === "hx" && String(t.table_name).endsWith("_ident")),
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
