/**
 * Schema migrations: numbered modules applied in order, each in its own transaction and
 * recorded in hx.migrations. A released migration is never edited; add a new one.
 */
import type { DuckDBConnection } from "@duckdb/node-api";
import { migration as m0001 } from "./0001-init.ts";
import { migration as m0002 } from "./0002-views.ts";
import { migration as m0003 } from "./0003-network.ts";
import { migration as m0004 } from "./0004-accounts.ts";
import { migration as m0005 } from "./0005-replication.ts";
import { migration as m0006 } from "./0006-services.ts";
import { migration as m0007 } from "./0007-healthz.ts";
import { migration as m0008 } from "./0008-epochs-unsupported.ts";
import { migration as m0009 } from "./0009-checks.ts";
import { migration as m0010 } from "./0010-server-counters.ts";
import { migration as m0011 } from "./0011-meta-peers.ts";
import { migration as m0012 } from "./0012-jetstream-checks.ts";
import { migration as m0013 } from "./0013-consumer-priority.ts";
import { migration as m0014 } from "./0014-views-refresh.ts";
import { migration as m0015 } from "./0015-page-views.ts";
import { migration as m0016 } from "./0016-consumer-replica-view.ts";
import { migration as m0017 } from "./0017-marker-seq-comment.ts";
import { migration as m0018 } from "./0018-servers-partial.ts";
import { migration as m0019 } from "./0019-findings-in-force.ts";
import { migration as m0020 } from "./0020-epochs-service-accounts.ts";
import { migration as m0021 } from "./0021-connection-bearer.ts";
import { migration as m0022 } from "./0022-connection-closes.ts";
import { migration as m0023 } from "./0023-raftz-queues-wal-compression.ts";
import { migration as m0024 } from "./0024-account-details.ts";
import { migration as m0025 } from "./0025-js-reserved-comments.ts";
import { migration as m0026 } from "./0026-connection-subjects-no-inboxes.ts";
import { migration as m0027 } from "./0027-leaf-remote-urls-each.ts";
import { migration as m0028 } from "./0028-epochs-asked-again.ts";
import { migration as m0029 } from "./0029-epochs-commit-no.ts";
import { migration as m0030 } from "./0030-epochs-own-connections.ts";
import { migration as m0031 } from "./0031-connection-jwt-account.ts";
import { migration as m0032 } from "./0032-stream-account-id.ts";
import { migration as m0033 } from "./0033-catalog-identity.ts";
import { migration as m0034 } from "./0034-account-jwt-expiry.ts";
import { migration as m0035 } from "./0035-account-name-everywhere.ts";
import { migration as m0036 } from "./0036-connection-subjects-nuid-letters.ts";
import { migration as m0037 } from "./0037-views-opts-in-force.ts";
import { migration as m0038 } from "./0038-connection-opts-epoch.ts";
import { migration as m0039 } from "./0039-replica-leader-figures.ts";
import { migration as m0040 } from "./0040-gateway-last-up.ts";
import { migration as m0041 } from "./0041-meta-group-stats.ts";
import { quote, table } from "./ddl.ts";

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
  /** Work SQL alone cannot say, run after `sql` in the same transaction (a rewrite of stored views). */
  readonly run?: (con: DuckDBConnection) => Promise<void>;
  /**
   * Work done before the migration's transaction, in transactions of its own: adding a column
   * and filling it a range of epochs at a time (epoch-batches.ts). DuckDB holds each updated
   * row's old and new value until COMMIT, so one transaction filling a large table would hold
   * all of them, gigabytes beyond db.memory-limit. It must be idempotent: a node stopped
   * before the migration is recorded runs it again. Tells its progress through `progress`.
   */
  readonly before?: (con: DuckDBConnection, progress: FillProgress) => Promise<void>;
}

/** How far a migration's fill has got: `done` of `total` ranges of epochs of `what` (a column). */
export type FillProgress = (what: string, done: number, total: number) => void;

/** What the caller of `migrate` is told as it works. */
export interface MigrateHooks {
  /** The pending migrations, before the first runs: one that fills a large table takes a while. */
  readonly starting?: (pending: readonly Migration[]) => void;
  /** A migration's fill, after each range of epochs (and before the first). */
  readonly progress?: (migration: Migration, what: string, done: number, total: number) => void;
}

/** Every migration, in order. */
export const MIGRATIONS: readonly Migration[] = [
  m0001,
  m0002,
  m0003,
  m0004,
  m0005,
  m0006,
  m0007,
  m0008,
  m0009,
  m0010,
  m0011,
  m0012,
  m0013,
  m0014,
  m0015,
  m0016,
  m0017,
  m0018,
  m0019,
  m0020,
  m0021,
  m0022,
  m0023,
  m0024,
  m0025,
  m0026,
  m0027,
  m0028,
  m0029,
  m0030,
  m0031,
  m0032,
  m0033,
  m0034,
  m0035,
  m0036,
  m0037,
  m0038,
  m0039,
  m0040,
  m0041,
];

const MIGRATIONS_TABLE = table("hx.migrations", "Schema migrations applied to this catalog, one row each.", [
  ["version", "INTEGER PRIMARY KEY", "Migration number."],
  ["name", "VARCHAR NOT NULL", "What the migration does."],
  ["applied_at", "TIMESTAMPTZ NOT NULL", "When it was applied."],
]);

/**
 * Applies the pending migrations and returns their versions. Refuses a catalog whose schema
 * is newer than this code knows: folding into it could write rows a newer natsmon would misread.
 */
export async function migrate(
  con: DuckDBConnection,
  migrations = MIGRATIONS,
  hooks: MigrateHooks = {},
): Promise<number[]> {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1)
      throw new Error(`migration ${m.name} is numbered ${m.version}, expected ${i + 1}`);
  });
  const bootstrapped = await con.runAndReadAll(
    "SELECT 1 FROM duckdb_tables() WHERE schema_name = 'hx' AND table_name = 'migrations'",
  );
  if (bootstrapped.currentRowCount === 0) {
    await inTransaction(con, "CREATE SCHEMA IF NOT EXISTS hx;\n" + MIGRATIONS_TABLE);
  }
  const done = new Set(
    (await con.runAndReadAll("SELECT version FROM hx.migrations")).getRowsJS().map((r) => Number(r[0])),
  );
  const newest = Math.max(0, ...done);
  if (newest > migrations.length) {
    throw new Error(
      `catalog schema is at version ${newest}, newer than this natsmon knows (${migrations.length}); refusing to open it`,
    );
  }
  const pending = migrations.filter((m) => !done.has(m.version));
  const applied: number[] = [];
  if (pending.length > 0) hooks.starting?.(pending);
  for (const m of pending) {
    // The views' columns inherit their tables' comments once, with the last migration: done
    // after each one, it read every view's columns 34 times over and made a new catalog's
    // first open take seconds. A run that fails part way leaves the comments to the next.
    const last = m === pending.at(-1);
    try {
      const { run, before } = m;
      if (before) await before(con, (what, done, total) => hooks.progress?.(m, what, done, total));
      const steps = [...(run ? [() => run(con)] : []), ...(last ? [() => inheritViewComments(con)] : [])];
      await inTransaction(con, m.sql, ...steps, () =>
        con
          .run(`INSERT INTO hx.migrations VALUES (${m.version}, ${quote(m.name)}, now())`)
          .then(() => undefined),
      );
    } catch (err) {
      throw new Error(`migration ${m.version} (${m.name}) failed: ${(err as Error).message}`, { cause: err });
    }
    applied.push(m.version);
  }
  return applied;
}

async function inTransaction(
  con: DuckDBConnection,
  sql: string,
  ...steps: readonly (() => Promise<void>)[]
): Promise<void> {
  await con.run("BEGIN TRANSACTION");
  try {
    if (sql.trim() !== "") await con.run(sql);
    for (const step of steps) await step();
    await con.run("COMMIT");
  } catch (err) {
    await con.run("ROLLBACK").catch(() => undefined);
    throw err;
  }
}

/**
 * Views whose tables are not their kind's (hx.<kind>s ← hx.<kind>_stats, _opts, _ident):
 * the tables their columns take comments from, in order of preference.
 */
const VIEW_SOURCES: Readonly<Record<string, readonly string[]>> = {
  closed_connections: ["connection_closes", "connection_opts", "connection_ident"],
};

/**
 * Gives each uncommented column of an hx view the comment of the same-named column of
 * its kind's tables (view hx.servers ← hx.server_stats, then _opts, then _ident; or the
 * tables VIEW_SOURCES names), so the views document themselves without repeating every
 * comment. Columns a view derives or renames carry their own comment, set in the view's
 * migration.
 */
async function inheritViewComments(con: DuckDBConnection): Promise<void> {
  const special = Object.entries(VIEW_SOURCES)
    .map(([view, tables]) => `WHEN ${quote(view)} THEN [${tables.map(quote).join(", ")}]`)
    .join(" ");
  const missing = await con.runAndReadAll(`
    WITH view_columns AS (
      SELECT c.table_name AS view_name, c.column_name,
             CASE c.table_name ${special}
               ELSE list_transform(['_stats', '_opts', '_ident'], x -> regexp_replace(c.table_name, 's$', '') || x)
             END AS sources
      FROM duckdb_columns() c
      JOIN duckdb_views() v ON v.schema_name = c.schema_name AND v.view_name = c.table_name
      WHERE c.schema_name = 'hx' AND c.comment IS NULL
    )
    SELECT vc.view_name, vc.column_name, t.comment
    FROM view_columns vc
    JOIN duckdb_columns() t ON t.schema_name = 'hx' AND t.column_name = vc.column_name AND t.comment IS NOT NULL
      AND list_contains(vc.sources, t.table_name)
    QUALIFY row_number() OVER (
      PARTITION BY vc.view_name, vc.column_name ORDER BY list_position(vc.sources, t.table_name)) = 1`);
  const statements = missing.getRowsJS().flatMap(([view, column, comment]) => {
    if (typeof view !== "string" || typeof column !== "string" || typeof comment !== "string") return [];
    return [`COMMENT ON COLUMN hx."${view}"."${column}" IS ${quote(comment)};`];
  });
  // One call for them all: hundreds of round trips to DuckDB's thread cost more than the work.
  if (statements.length > 0) await con.run(statements.join("\n"));
}
