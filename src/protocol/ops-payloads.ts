/**
 * Wire shapes of the system-space ops endpoints the spec leaves "not shown": `ops.sizing`,
 * `ops.memory` (and `feed.memory`, the same snapshot), `ops.storage`, and the `usage.record`
 * payload. Sizes in bytes, times RFC 3339.
 */

/** `ops.sizing`: what DuckDB runs with, what was configured, and the machine. */
export interface OpsSizingReply {
  system: string;
  db: {
    /** In force, as DuckDB reports it (e.g. "1.0 GiB"). */
    memory_limit: string;
    threads: number;
    /** The WAL size at which DuckDB checkpoints, as DuckDB reports it (e.g. "128.0 MiB"). */
    checkpoint_threshold: string;
    /**
     * As configured: db.memory-limit ("none" or a negative size = no limit), db.threads (0 =
     * one per core) and db.checkpoint-threshold in bytes (its default when not given).
     */
    configured: { memory_limit: string; threads: number; checkpoint_threshold_bytes: number };
  };
  machine: { memory_bytes: number; free_memory_bytes: number; cores: number };
}

/** `ops.memory` and each `feed.memory` message. */
export interface OpsMemoryReply {
  system: string;
  /** When the snapshot was taken. */
  at: string;
  db: {
    memory_limit: string;
    total_memory_bytes: number;
    total_temporary_bytes: number;
    /** `duckdb_memory()`: one entry per component. */
    components: { tag: string; memory_bytes: number; temporary_bytes: number }[];
  };
  /** The Node process: process.memoryUsage(). */
  process: {
    rss_bytes: number;
    heap_total_bytes: number;
    heap_used_bytes: number;
    external_bytes: number;
    array_buffers_bytes: number;
  };
}

/** `ops.storage`: the catalog on disk and its connection pools. */
export interface OpsStorageReply {
  system: string;
  path: string;
  file_bytes: number;
  wal_bytes: number;
  blocks: { block_size: number; total: number; used: number; free: number };
  pools: {
    /** Query connections (db.query, db.query.stream, discovery). */
    readers: { size: number; busy: number; waiting: number };
    /** Backup connection(s) (db.backup.stream). */
    backup: { size: number; busy: number; waiting: number };
  };
}

/** `usage.record`: one page view, published (no reply) by the web tier that served it. */
export interface UsageRecord {
  /** Path of the page, required, e.g. "/systems/prod/checks". */
  path: string;
  title?: string;
  referrer?: string;
  /** The user the web tier authenticated. */
  user?: string;
  /** When it was viewed, RFC 3339; default: when it is recorded. */
  at?: string;
}
