import type { NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager } from "@nats-io/jetstream";
import { ensureStream, findingsBucketConfig, scrapeStreamConfig } from "../bus/index.ts";
import type { SystemConfig } from "../config/index.ts";
import type { OpsInfoReply } from "../protocol/index.ts";
import { opsInfoOf } from "./catalog-endpoints.ts";
import type { CatalogSide } from "./catalog-side.ts";
import type { ScrapeSide } from "./scrape-side.ts";

export interface SystemPipeline extends AsyncDisposable {
  readonly system: SystemConfig;
  readonly scrape: ScrapeSide | undefined;
  readonly catalog: CatalogSide | undefined;
  opsInfo(): OpsInfoReply;
}

/**
 * The table of contents of one system, in flow order:
 *   ① scrape side: monitored servers → scrape stream (epochs closed by commit markers)
 *   ② the scrape stream on the sink: the seam between the two sides
 *   ③ catalog side: commit markers → fold into DuckDB → ⑥ feed.epoch → ④ checks into hx.check_findings
 *     → ⑤ diff against the KV baseline → ⑥ the node's notification outbox, then
 *     feed.finding.<status>.<severity>.<code> (the node's endpoint senders read the outbox)
 *   ⑦ API: db.*, checks.* and ops.info on the catalog node; scraper and sink ops on the scrape node
 * Each side runs only where its role is configured; they meet only through the stream.
 * Both sides come made, their endpoints already served (503 until they have started): the
 * node registers them before any system starts, since $MON.ping lists every role from then on.
 */
export async function startSystemPipeline(options: {
  sink: NatsConnection;
  replicas: number;
  system: SystemConfig;
  catalog: CatalogSide | undefined;
  scrape: ScrapeSide | undefined;
  /** Stops before the scrape side starts; the caller stops the sides (they are its own). */
  signal?: AbortSignal;
}): Promise<SystemPipeline> {
  const { system, catalog, scrape } = options;

  // ② Both sides make sure the stream exists, so either may start first; its limits
  // (scraper.stream) are the scrape side's to set, so a catalog-only node keeps them.
  const limits = system.scraper.stream;
  await ensureStream(
    await jetstreamManager(options.sink),
    await scrapeStreamConfig(system.id, options.replicas, limits),
    { keepLimits: scrape === undefined },
  ).catch((err: unknown) => {
    // nats-server reserves max_bytes (times the replicas) in its JetStream storage.
    if (limits.maxBytes < 0 || !/insufficient storage/i.test(String(err))) throw err;
    throw new Error(
      `the scrape stream of system ${system.id} was refused its max_bytes of ${limits.maxBytes} bytes ` +
        `(scraper.stream.max-bytes) times ${options.replicas} replicas: nats-server reserves it in its ` +
        "JetStream storage (max_file_store) and has not that much left; lower scraper.stream.max-bytes " +
        "or give the sink's JetStream more storage",
      { cause: err },
    );
  });

  // ⑤ The findings baseline bucket belongs to the catalog side.
  if (catalog) {
    await ensureStream(
      await jetstreamManager(options.sink),
      await findingsBucketConfig(system.id, options.replicas),
    );
  }

  // ③ Catalog side first, so a scrape published right away is consumed by this node.
  await catalog?.start();

  // ① Scrape side last: everything downstream is ready for its first epoch.
  options.signal?.throwIfAborted();
  await scrape?.start();

  return {
    system,
    scrape,
    catalog,
    opsInfo: () => opsInfoOf(system, catalog),
    async [Symbol.asyncDispose]() {
      // Upstream first: stop producing, then let the catalog finish what it holds.
      await scrape?.[Symbol.asyncDispose]();
      await catalog?.[Symbol.asyncDispose]();
    },
  };
}
