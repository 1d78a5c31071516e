import type { NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager } from "@nats-io/jetstream";
import {
  dbQueryHandler,
  dbQueryStreamHandler,
  dbBackupStreamHandler,
  dbExplainHandler,
  dbSchemasHandler,
  dbTablesHandler,
  dbColumnsHandler,
  dbMacrosHandler,
  opsInfoHandler,
  opsSizingHandler,
  opsMemoryHandler,
  opsStorageHandler,
  usageRecordHandler,
  checksListHandler,
  checksInfoHandler,
  checksFindingsHandler,
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
import type { Notifier } from "../notify/index.ts";
import type { ScrapeFaults } from "../scrape/index.ts";
import { startCatalogSide, type CatalogSide } from "./catalog-side.ts";
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
 */
export async function startSystemPipeline(options: {
  sink: NatsConnection;
  sinkSystem: ConnectTarget | undefined;
  replicas: number;
  system: SystemConfig;
  nodeId: string;
  dataDir: string;
  api: Api;
  notifier: Notifier;
  metrics: NodeMetrics;
  log: Logger;
  faults?: ScrapeFaults;
  catalogReopenMs?: number;
}): Promise<SystemPipeline> {
  const { system, api } = options;
  const log = options.log.child({ system: system.id });

  // ② Both sides make sure the stream exists, so either may start first.
  await ensureStream(
    await jetstreamManager(options.sink),
    await scrapeStreamConfig(system.id, options.replicas),
  );

  // ⑤ The findings baseline bucket belongs to the catalog side.
  if (system.roles.includes(Role.Catalog)) {
    await ensureStream(
      await jetstreamManager(options.sink),
      await findingsBucketConfig(system.id, options.replicas),
    );
  }

  // ③ Catalog side first, so a scrape published right away is consumed by this node.
  const catalog = system.roles.includes(Role.Catalog)
    ? await startCatalogSide({
        ...options,
        log,
        ...(options.catalogReopenMs ? { reopenMs: options.catalogReopenMs } : {}),
      })
    : undefined;

  const opsInfo = (): OpsInfoReply => ({
    geo: { enabled: false },
    realtime: { enabled: false },
    scraper: { interval: system.scraper.intervalMs * 1_000_000 },
    db: { retention: system.db.retentionMs * 1_000_000 },
    checks: system.disabledChecks.length > 0 ? { disabled: [...system.disabledChecks] } : {},
  });

  // ⑦ API endpoints of the catalog side.
  if (catalog) {
    await api.addSystemEndpoints(system.id, {
      "db.query": dbQueryHandler(catalog.query),
      "db.query.stream": dbQueryStreamHandler(catalog.queryStream),
      "db.backup.stream": dbBackupStreamHandler(catalog.backupStream),
      "db.explain": dbExplainHandler(catalog.discovery),
      "db.schemas": dbSchemasHandler(catalog.discovery),
      "db.tables": dbTablesHandler(catalog.discovery),
      "db.columns": dbColumnsHandler(catalog.discovery),
      "db.macros": dbMacrosHandler(catalog.discovery),
      "ops.info": opsInfoHandler(opsInfo),
      "ops.sizing": opsSizingHandler(catalog.ops),
      "ops.memory": opsMemoryHandler(catalog.ops),
      "ops.storage": opsStorageHandler(catalog.ops),
      "usage.record": usageRecordHandler(catalog.ops, log),
      "checks.list": checksListHandler(catalog.checks),
      "checks.info": checksInfoHandler(catalog.checks),
      "checks.findings": checksFindingsHandler(catalog.checks),
    });
  }

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
    opsInfo,
    async [Symbol.asyncDispose]() {
      // Upstream first: stop producing, then let the catalog finish what it holds.
      await scrape?.[Symbol.asyncDispose]();
      await catalog?.[Symbol.asyncDispose]();
    },
  };
}
