/**
 * What the system-space ops endpoints report about a catalog: DuckDB's sizing, its live
 * memory by component, the files on disk and the connection pools; and the page views
 * `usage.record` stores. Read on a reader connection; page views on the writer.
 */
import { stat } from "node:fs/promises";
import type { Catalog } from "./open-catalog.ts";
import type { PoolStats } from "./connection-pool.ts";

export interface CatalogSizing {
  readonly memoryLimit: string;
  readonly threads: number;
  readonly checkpointThreshold: string;
}

export interface MemoryComponent {
  readonly tag: string;
  readonly memoryBytes: number;
  readonly temporaryBytes: number;
}

export interface CatalogStorage {
  readonly fileBytes: number;
  /** 0 when there is no WAL (everything checkpointed). */
  readonly walBytes: number;
  readonly blockSize: number;
  readonly totalBlocks: number;
  readonly usedBlocks: number;
  readonly freeBlocks: number;
  readonly pools: { readonly readers: PoolStats; readonly backup: PoolStats };
}

export interface PageView {
  readonly at: Date;
  readonly path: string;
  readonly title?: string;
  readonly referrer?: string;
  readonly user?: string;
}

async function rows(catalog: Catalog, sql: string): Promise<Record<string, unknown>[]> {
  return catalog.withReader(async (con) => (await con.runAndReadAll(sql)).getRowObjectsJS());
}

/** DuckDB's memory limit, threads and checkpoint threshold in force. */
export async function catalogSizing(catalog: Catalog): Promise<CatalogSizing> {
  const [row] = await rows(
    catalog,
    `SELECT current_setting('memory_limit') AS memory_limit, current_setting('threads') AS threads,
            current_setting('checkpoint_threshold') AS checkpoint_threshold`,
  );
  return {
    memoryLimit: String(row?.memory_limit),
    threads: Number(row?.threads),
    checkpointThreshold: String(row?.checkpoint_threshold),
  };
}

/** DuckDB's memory by component, as `duckdb_memory()` reports it. */
export async function catalogMemory(catalog: Catalog): Promise<MemoryComponent[]> {
  const found = await rows(
    catalog,
    "SELECT tag, memory_usage_bytes, temporary_storage_bytes FROM duckdb_memory() ORDER BY tag",
  );
  return found.map((r) => ({
    tag: String(r.tag),
    memoryBytes: Number(r.memory_usage_bytes),
    temporaryBytes: Number(r.temporary_storage_bytes),
  }));
}

/** The database file, its WAL, DuckDB's block figures and the connection pools. */
export async function catalogStorage(catalog: Catalog): Promise<CatalogStorage> {
  const size = async (path: string) => (await stat(path).catch(() => undefined))?.size ?? 0;
  const [blocks] = await rows(
    catalog,
    "SELECT block_size, total_blocks, used_blocks, free_blocks FROM pragma_database_size()",
  );
  return {
    fileBytes: await size(catalog.path),
    walBytes: await size(`${catalog.path}.wal`),
    blockSize: Number(blocks?.block_size ?? 0),
    totalBlocks: Number(blocks?.total_blocks ?? 0),
    usedBlocks: Number(blocks?.used_blocks ?? 0),
    freeBlocks: Number(blocks?.free_blocks ?? 0),
    pools: catalog.pools(),
  };
}

/** Stores one page view. */
export async function recordPageView(catalog: Catalog, view: PageView, nodeId: string): Promise<void> {
  await catalog.withWriter(async ({ con }) => {
    await con.run(
      "INSERT INTO main.page_views (viewed_at, path, title, referrer, user_name, node_id) VALUES ($1::TIMESTAMPTZ, $2, $3, $4, $5, $6)",
      [
        view.at.toISOString(),
        view.path,
        view.title ?? null,
        view.referrer ?? null,
        view.user ?? null,
        nodeId,
      ],
    );
  });
}
