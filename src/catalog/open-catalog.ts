import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";
import type { DbConfig } from "../config/index.ts";
import type { Logger } from "../lib/index.ts";
import { migrate } from "./migrations/index.ts";
import { loadKeyCache, type KeyCache } from "./key-cache.ts";

/** Read connections; concurrent queries beyond this wait for one to free up. */
const READ_POOL_SIZE = 2;

export interface Catalog extends AsyncDisposable {
  readonly path: string;
  /** The one connection that writes (folds, retention). */
  readonly writer: DuckDBConnection;
  /** Stable pks and the latest _opts of every entity, as committed. */
  keys: KeyCache;
  /** Runs `fn` on a free read connection. */
  withReader<T>(fn: (con: DuckDBConnection) => Promise<T>): Promise<T>;
}

/**
 * Opens (or creates) a system's DuckDB file and brings its schema up to date. One instance
 * per file: two instances on one file in one process would corrupt it. External access is
 * off for the whole instance, so user SQL cannot read or write files or attach databases.
 */
export async function openCatalog(options: {
  path: string;
  db: DbConfig;
  logger?: Logger;
}): Promise<Catalog> {
  await mkdir(dirname(options.path), { recursive: true });
  const settings: Record<string, string> = {
    enable_external_access: "false",
    autoinstall_known_extensions: "false",
    memory_limit: options.db.memoryLimit,
  };
  if (options.db.threads > 0) settings.threads = String(options.db.threads);
  const instance = await DuckDBInstance.create(options.path, settings);
  const writer = await instance.connect();
  try {
    const applied = await migrate(writer);
    if (applied.length > 0)
      options.logger?.info({ path: options.path, applied }, "catalog migrations applied");
  } catch (err) {
    writer.closeSync();
    instance.closeSync();
    throw err;
  }
  const readers: DuckDBConnection[] = [];
  for (let i = 0; i < READ_POOL_SIZE; i++) readers.push(await instance.connect());
  const free = [...readers];
  const waiting: ((con: DuckDBConnection) => void)[] = [];
  const acquire = (): Promise<DuckDBConnection> => {
    const con = free.pop();
    return con ? Promise.resolve(con) : new Promise((resolve) => waiting.push(resolve));
  };
  const release = (con: DuckDBConnection) => {
    const next = waiting.shift();
    if (next) next(con);
    else free.push(con);
  };
  const catalog: Catalog = {
    path: options.path,
    writer,
    keys: await loadKeyCache(writer),
    async withReader(fn) {
      const con = await acquire();
      try {
        return await fn(con);
      } finally {
        release(con);
      }
    },
    [Symbol.asyncDispose]() {
      for (const con of readers) con.closeSync();
      writer.closeSync();
      instance.closeSync();
      return Promise.resolve();
    },
  };
  return catalog;
}
