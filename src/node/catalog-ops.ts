import { cpus, freemem, totalmem } from "node:os";
import type { NatsConnection } from "@nats-io/nats-core";
import type { OpsPort } from "../api/index.ts";
import {
  catalogMemory,
  catalogSizing,
  catalogStorage,
  recordPageView,
  type Catalog,
} from "../catalog/index.ts";
import type { SystemConfig } from "../config/index.ts";
import { systemSubjects, type OpsMemoryReply } from "../protocol/index.ts";
import type { Logger } from "../lib/index.ts";

/** The system-space ops endpoints over one catalog; `opened` throws 503 while it is not open. */
export function catalogOpsPort(system: SystemConfig, nodeId: string, opened: () => Catalog): OpsPort {
  return {
    async sizing() {
      const catalog = opened();
      const s = await catalogSizing(catalog);
      return {
        system: system.id,
        db: {
          memory_limit: s.memoryLimit,
          threads: s.threads,
          checkpoint_threshold: s.checkpointThreshold,
          configured: {
            memory_limit: system.db.memoryLimit,
            threads: system.db.threads,
            checkpoint_threshold_bytes: system.db.checkpointThresholdBytes,
          },
        },
        machine: { memory_bytes: totalmem(), free_memory_bytes: freemem(), cores: cpus().length },
      };
    },
    memory: () => memorySnapshot(system.id, opened()),
    async storage() {
      const catalog = opened();
      const s = await catalogStorage(catalog);
      return {
        system: system.id,
        path: catalog.path,
        file_bytes: s.fileBytes,
        wal_bytes: s.walBytes,
        blocks: { block_size: s.blockSize, total: s.totalBlocks, used: s.usedBlocks, free: s.freeBlocks },
        pools: s.pools,
      };
    },
    async recordPageView(view) {
      await recordPageView(
        opened(),
        {
          at: view.at ? new Date(view.at) : new Date(),
          path: view.path,
          ...(view.title === undefined ? {} : { title: view.title }),
          ...(view.referrer === undefined ? {} : { referrer: view.referrer }),
          ...(view.user === undefined ? {} : { user: view.user }),
        },
        nodeId,
      );
    },
  };
}

/** `ops.memory` and `feed.memory`: DuckDB's memory by component and the Node process's. */
export async function memorySnapshot(systemId: string, catalog: Catalog): Promise<OpsMemoryReply> {
  const [components, sizing] = await Promise.all([catalogMemory(catalog), catalogSizing(catalog)]);
  const m = process.memoryUsage();
  return {
    system: systemId,
    at: new Date().toISOString(),
    db: {
      memory_limit: sizing.memoryLimit,
      total_memory_bytes: components.reduce((sum, c) => sum + c.memoryBytes, 0),
      total_temporary_bytes: components.reduce((sum, c) => sum + c.temporaryBytes, 0),
      components: components.map((c) => ({
        tag: c.tag,
        memory_bytes: c.memoryBytes,
        temporary_bytes: c.temporaryBytes,
      })),
    },
    process: {
      rss_bytes: m.rss,
      heap_total_bytes: m.heapTotal,
      heap_used_bytes: m.heapUsed,
      external_bytes: m.external,
      array_buffers_bytes: m.arrayBuffers,
    },
  };
}

/**
 * ⑥ `feed.memory`: the memory snapshot once per `db.memory-profile.interval` while the profiler
 * is enabled (spec: Broadcast feeds), fire and forget. Ticks do not overlap.
 */
export function startMemoryFeed(
  nc: NatsConnection,
  system: SystemConfig,
  catalog: () => Catalog | undefined,
  log: Logger,
): AsyncDisposable {
  if (!system.db.memoryProfile.enabled) return { [Symbol.asyncDispose]: async () => {} };
  const subject = systemSubjects(system.id).feedMemory;
  let running: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    const open = catalog();
    if (!open) return;
    running = running.then(async () => {
      try {
        nc.publish(subject, JSON.stringify(await memorySnapshot(system.id, open)));
      } catch (err) {
        log.warn({ err }, "memory profile sample failed");
      }
    });
  }, system.db.memoryProfile.intervalMs);
  return {
    async [Symbol.asyncDispose]() {
      clearInterval(timer);
      await running;
    },
  };
}
