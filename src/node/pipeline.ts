import type { NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager } from "@nats-io/jetstream";
import {
  scraperStatusHandler,
  scraperToggleHandler,
  scraperTriggerHandler,
  sinkInfoHandler,
  profilezHandler,
  expvarzHandler,
  disconnectHistoryHandler,
  type Api,
} from "../api/index.ts";
import {
  ensureStream,
  findingsBucketConfig,
  scrapeStreamConfig,
  scrapeStreamInfo,
  type ConnectTarget,
} from "../bus/index.ts";
import type { SystemConfig } from "../config/index.ts";
import { Role } from "../domain/index.ts";
import type { OpsInfoReply } from "../protocol/index.ts";
import type { Logger, NodeMetrics } from "../lib/index.ts";
import type { ScrapeFaults } from "../scrape/index.ts";
import { opsInfoOf } from "./catalog-endpoints.ts";
import type { CatalogSide } from "./catalog-side.ts";
import { startScrapeSide, type ScrapeSide } from "./scrape-side.ts";

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
 * The catalog side comes made, its endpoints already served (503 until it opens): the node
 * registers them before any system starts, since $MON.ping lists every role from then on.
 */
export async function startSystemPipeline(options: {
  sink: NatsConnection;
  sinkSystem: ConnectTarget | undefined;
  replicas: number;
  system: SystemConfig;
  nodeId: string;
  api: Api;
  catalog: CatalogSide | undefined;
  metrics: NodeMetrics;
  log: Logger;
  faults?: ScrapeFaults;
}): Promise<SystemPipeline> {
  const { system, api, catalog } = options;
  const log = options.log.child({ system: system.id });

  // ② Both sides make sure the stream exists, so either may start first.
  await ensureStream(
    await jetstreamManager(options.sink),
    await scrapeStreamConfig(system.id, options.replicas),
  );

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
  const scrape = system.roles.includes(Role.Scrape) ? await startScrapeSide({ ...options, log }) : undefined;

  // ⑦ API endpoints of the scrape side.
  if (scrape) {
    await api.addSystemEndpoints(system.id, {
      "ops.scraper.status": scraperStatusHandler(scrape.port),
      "ops.scraper.toggle": scraperToggleHandler(scrape.port),
      "ops.scraper.trigger": scraperTriggerHandler(scrape.port),
      "ops.sink.info": sinkInfoHandler(() => scrapeStreamInfo(options.sink, system.id)),
      "ops.diagnostics.profilez": profilezHandler(scrape.askDiagnostic, system.id),
      "ops.diagnostics.expvarz": expvarzHandler(scrape.askDiagnostic, system.id),
      "ops.disconnect.history": disconnectHistoryHandler((since, limit) =>
        scrape.disconnects.history(since, limit),
      ),
    });
  }

  return {
    system,
    scrape,
    catalog,
    opsInfo: () => opsInfoOf(system),
    async [Symbol.asyncDispose]() {
      // Upstream first: stop producing, then let the catalog finish what it holds.
      await scrape?.[Symbol.asyncDispose]();
      await catalog?.[Symbol.asyncDispose]();
    },
  };
}
