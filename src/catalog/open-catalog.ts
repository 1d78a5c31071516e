/**
 * Opening a system's DuckDB file: one instance, one write connection for folds, a small
 * pool of read connections for queries, the schema brought up to date, and the writer's
 * state (table shapes, key cache) loaded.
 */
import { mkdir, realpath } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";
import type { DbConfig } from "../config/index.ts";
import { QueryTimeoutError } from "../domain/index.ts";
import type { Logger } from "../lib/index.ts";
import { ConnectionPool, type PoolStats } from "./connection-pool.ts";
import { loadKeyCache, type KeyCache } from "./key-cache.ts";
import { KIND_NAMES, identTable, optsTable, statsTable } from "./kinds/entity-kinds.ts";
import { MIGRATIONS, migrate, type MigrateHooks } from "./migrations/index.ts";
import { loadTableShapes, type TableShapes } from "./table-writer.ts";

/**
 * Read connections. Concurrent queries beyond this wait their turn: each running query
 * holds a libuv worker thread, and the pool is shared with fs, dns and crypto.
 */
const READ_POOL_SIZE = 2;
/** Backup streams read on a connection of their own, so a long backup never holds up queries. */
const BACKUP_POOL_SIZE = 1;

/** The write side, lent to one fold (or other writer) at a time. */
export interface Writer {
  readonly con: DuckDBConnection;
  /** Column names and types of the hx tables, as the migrations made them. */
  readonly tables: TableShapes;
  /** Committed pks and _opts fingerprints; replaced wholesale when a fold fails. */
  keys: KeyCache;
}

export interface Catalog extends AsyncDisposable {
  readonly path: string;
  /** True once disposal began: an interrupted query was stopped by shutdown, not by its timeout. */
  readonly closing: boolean;
  /** Aborts when disposal begins: long holders of a connection (streams) stop at once. */
  readonly closingSignal: AbortSignal;
  /** Runs `fn` with the write side; writers run one after another. */
  withWriter<T>(fn: (writer: Writer) => Promise<T>): Promise<T>;
  /** Runs `fn` on a free read connection, waiting for one if need be (until `signal` aborts). */
  withReader<T>(fn: (con: DuckDBConnection) => Promise<T>, signal?: AbortSignal): Promise<T>;
  /** Like withReader, on the backup connection(s) (db.backup.stream), apart from the query readers. */
  withBackupReader<T>(fn: (con: DuckDBConnection) => Promise<T>, signal?: AbortSignal): Promise<T>;
  /** Connections of each pool: how many, how many lent out, how many borrowers wait. */
  pools(): { readers: PoolStats; backup: PoolStats };
}

/** Files open in this process: DuckDB does not stop a second instance on the same file, which corrupts it. */
const openFiles = new Set<string>();

/**
 * Opens (or creates) a catalog file and applies pending migrations. External access is off
 * for the whole instance from creation on (it cannot be turned back on while the database
 * runs), so no SQL, the users' included, can read or write other files or attach databases;
 * the database's own file, WAL and temp spill files are unaffected.
 */
export async function openCatalog(options: {
  path: string;
  db: DbConfig;
  logger?: Logger;
}): Promise<Catalog> {
  await mkdir(dirname(options.path), { recursive: true });
  const path = join(await realpath(dirname(options.path)), basename(options.path));
  if (openFiles.has(path)) throw new Error(`catalog ${path} is already open in this process`);
  openFiles.add(path);
  const settings: Record<string, string> = {
    enable_external_access: "false",
    autoinstall_known_extensions: "false",
    autoload_known_extensions: "false",
    allow_community_extensions: "false",
    memory_limit: options.db.memoryLimit,
    // New files only (an existing file keeps the block size in its header). With about 50
    // tables, each holding at least one block and its index another, DuckDB's 256 KiB
    // default cost ~20 MB before the first epoch was complete; 64 KiB blocks measured 19
    // bytes per entity-epoch after 60 medium-profile epochs against 26 (16 KiB was worse).
    default_block_size: "65536",
    // DuckDB checkpoints at this WAL size, at the commit that reaches it (a fold's).
    checkpoint_threshold: `${options.db.checkpointThresholdBytes}B`,
  };
  if (options.db.threads > 0) settings.threads = String(options.db.threads);
  const opened: { close(): void }[] = [];
  try {
    const instance = await DuckDBInstance.create(path, settings);
    opened.push({ close: () => instance.closeSync() });
    const con = await instance.connect();
    opened.push({ close: () => con.closeSync() });
    // Results must not depend on the host's zone (date_trunc, ::DATE of a TIMESTAMPTZ).
    // TimeZone belongs to the ICU extension, unknown at create time; GLOBAL reaches every
    // connection made after this one.
    await con.run("SET GLOBAL TimeZone = 'UTC'");
    const applied = await migrate(con, MIGRATIONS, migrationLog(path, options.logger));
    if (applied.length > 0) options.logger?.info({ path, applied }, "catalog migrations applied");
    const tables = await loadTableShapes(con);
    for (const kind of KIND_NAMES) {
      for (const table of [identTable(kind), optsTable(kind), statsTable(kind)]) {
        if (!tables.has(table)) throw new Error(`catalog ${path} has no table hx.${table}`);
      }
    }
    const writer: Writer = { con, tables, keys: await loadKeyCache(con) };
    const readers: DuckDBConnection[] = [];
    for (let i = 0; i < READ_POOL_SIZE; i++) {
      const reader = await instance.connect();
      opened.push({ close: () => reader.closeSync() });
      readers.push(reader);
    }
    const backup: DuckDBConnection[] = [];
    for (let i = 0; i < BACKUP_POOL_SIZE; i++) {
      const reader = await instance.connect();
      opened.push({ close: () => reader.closeSync() });
      backup.push(reader);
    }
    return catalogOf(path, instance, writer, {
      write: new ConnectionPool([con]),
      read: new ConnectionPool(readers),
      backup: new ConnectionPool(backup),
    });
  } catch (err) {
    for (const o of opened.reverse()) o.close();
    openFiles.delete(path);
    throw err;
  }
}

function catalogOf(
  path: string,
  instance: DuckDBInstance,
  writer: Writer,
  pools: { write: ConnectionPool; read: ConnectionPool; backup: ConnectionPool },
): Catalog {
  const { write: writePool, read: readPool, backup: backupPool } = pools;
  let disposed: Promise<void> | undefined;
  const closingController = new AbortController();
  return {
    path,
    closingSignal: closingController.signal,
    get closing() {
      return readPool.closing;
    },
    withWriter: (fn) => writePool.use(() => fn(writer)),
    withReader: (fn, signal) => readPool.use(fn, signal),
    withBackupReader: (fn, signal) => backupPool.use(fn, signal),
    pools: () => ({ readers: readPool.stats(), backup: backupPool.stats() }),
    [Symbol.asyncDispose]() {
      closingController.abort(new QueryTimeoutError("the catalog is shutting down"));
      disposed ??= (async () => {
        // Queries are stopped (spec: 408 while shutting down); a fold in progress is let
        // finish, since its transaction is short and a half-done one would be rolled back anyway.
        const closing = () => new QueryTimeoutError("the catalog is closing; query not run");
        await Promise.all([readPool.close(closing, true), backupPool.close(closing, true)]);
        await writePool.close(() => new Error(`catalog ${path} is closed`), false);
        instance.closeSync();
        openFiles.delete(path);
      })();
      return disposed;
    },
  };
}

/** A migration's fill is logged at most this often (and when each column is done). */
const FILL_LOG_MS = 10_000;

/**
 * What migrating a catalog logs: the pending migrations before the first runs, and a fill's
 * progress (ranges of epochs done), as on a large catalog it keeps the node in start-up for
 * minutes.
 */
function migrationLog(path: string, logger: Logger | undefined): MigrateHooks {
  let logged = 0;
  return {
    starting: (pending) =>
      logger?.info(
        { path, pending: pending.map((m) => m.version) },
        "applying catalog migrations; on a large catalog, filling a new column of every row takes minutes",
      ),
    progress: (m, what, done, total) => {
      const now = Date.now();
      if (total === 0 || (done > 0 && done < total && now - logged < FILL_LOG_MS)) return;
      logged = now;
      logger?.info(
        { path, migration: m.version, column: what, ranges_done: done, ranges: total },
        done === total ? "catalog migration filled a column" : "catalog migration filling a column",
      );
    },
  };
}
