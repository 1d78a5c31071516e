import type { Config } from "../config/index.ts";
import {
  startApi,
  opsMetricsHandler,
  opsNatsInfoHandler,
  opsPprofHandler,
  opsVersionCheckHandler,
  opsVersionHandler,
} from "../api/index.ts";
import { nodeOpsPort } from "./node-ops.ts";
import { checkDescription } from "../checks/index.ts";
import { startNotifier, type Notifier, type SenderTiming } from "../notify/index.ts";
import { Role } from "../domain/index.ts";
import type { DiscoveryReply } from "../protocol/index.ts";
import { createMetrics, VERSION, type Logger } from "../lib/index.ts";
import type { ScrapeFaults } from "../scrape/index.ts";
import { catalogEndpoints } from "./catalog-endpoints.ts";
import { createCatalogSide, type CatalogSide } from "./catalog-side.ts";
import { scrapeEndpoints } from "./scrape-endpoints.ts";
import { createScrapeSide, type ScrapeSide } from "./scrape-side.ts";
import { startSystemPipeline, type SystemPipeline } from "./pipeline.ts";
import { startSink } from "./sink.ts";

export interface RunningNode extends AsyncDisposable {
  readonly nodeId: string;
  /** Where clients reach the bus this node serves on. */
  readonly url: string;
  readonly embedded: boolean;
  readonly systems: readonly SystemPipeline[];
  discovery(): DiscoveryReply;
}

/**
 * Starts a node: the sink bus (embedded when none is configured), the notifier, the micro
 * service and the discovery ping with every side's endpoints, then each system's
 * pipeline. Disposal runs in reverse: systems, API, notifier, bus.
 */
export async function startNode(
  config: Config,
  options: {
    log: Logger;
    faults?: ScrapeFaults;
    notifyTiming?: SenderTiming;
    /** npm registry base URL for ops.version.check (default npm's). */
    updateRegistry?: string;
    /** How often a catalog that would not open is tried again (default once a minute). */
    catalogReopenMs?: number;
    /** How often retention runs (default once a minute). */
    retentionEveryMs?: number;
    /**
     * Stops the start between its steps (the caller caught SIGTERM): what has started is
     * stopped, as when a step fails, and startNode rejects with the signal's reason.
     */
    signal?: AbortSignal;
  },
): Promise<RunningNode> {
  const nodeId = config.node.id;
  const log = options.log.child({ node: nodeId });
  const sink = await startSink(config, nodeId);
  const systems: SystemPipeline[] = [];
  const metrics = createMetrics(nodeId);
  const discovery = (): DiscoveryReply => {
    // Held even when its database would not open (spec: "holds the system's catalog but its
    // database is not open"): ops.info is the configuration's, and answers then too.
    const firstCatalog = systems.find((s) => s.catalog);
    return {
      node_id: nodeId,
      version: VERSION,
      capabilities: firstCatalog ? firstCatalog.opsInfo() : {},
      systems: config.systems.map((system) => {
        const running = systems.find((s) => s.system.id === system.id);
        const hasScrape = system.roles.includes(Role.Scrape);
        return {
          id: system.id,
          roles: [...system.roles],
          ...(hasScrape && Object.keys(system.metadata).length > 0
            ? { metadata: { ...system.metadata } }
            : {}),
          ...(running?.catalog?.error ? { catalog_error: running.catalog.error } : {}),
        };
      }),
      ...(Object.keys(config.node.metadata).length > 0 ? { metadata: { ...config.node.metadata } } : {}),
    };
  };
  let api;
  let notifier: Notifier | undefined;
  const catalogs = new Map<string, CatalogSide>();
  const scrapes = new Map<string, ScrapeSide>();
  const stopIfAborted = () => options.signal?.throwIfAborted();
  try {
    stopIfAborted();
    // ⑥ The node's endpoint senders start before any system produces transitions.
    notifier = await startNotifier({
      nc: sink.nc,
      nodeId,
      replicas: config.sink.replicas,
      endpoints: config.notifications.endpoints,
      disabledChecks: new Map(config.systems.map((s) => [s.id, s.disabledChecks])),
      body: {
        describe: checkDescription,
        externalUrl: config.web.externalUrl,
        systemCount: config.systems.length,
      },
      userAgent: `natsmon/${VERSION}`,
      log,
      metrics,
      ...(options.notifyTiming ? { timing: options.notifyTiming } : {}),
    });
    stopIfAborted();
    api = await startApi(sink.nc, { nodeId, discovery, log, metrics });
    const nodeOps = nodeOpsPort({
      nodeId,
      sink,
      metrics,
      ...(options.updateRegistry ? { registry: options.updateRegistry } : {}),
    });
    await api.addNodeEndpoints({
      "ops.version": opsVersionHandler(nodeOps),
      "ops.version.check": opsVersionCheckHandler(nodeOps),
      "ops.nats.info": opsNatsInfoHandler(nodeOps),
      "ops.pprof": opsPprofHandler(nodeOps),
      "ops.metrics": opsMetricsHandler(nodeOps),
    });
    // $MON.ping lists every system with its roles, so each side's endpoints are served before
    // ping answers: 503 "opening" or "starting" until its pipeline has started it, rather than
    // no responder at all (spec: each db endpoint answers 503 while it is not open).
    for (const system of config.systems) {
      const systemLog = log.child({ system: system.id });
      if (system.roles.includes(Role.Catalog)) {
        const catalog = createCatalogSide({
          sink: sink.nc,
          system,
          nodeId,
          dataDir: config.node.dataDir,
          notifier,
          metrics,
          log: systemLog,
          ...(options.catalogReopenMs ? { reopenMs: options.catalogReopenMs } : {}),
          ...(options.retentionEveryMs ? { retentionEveryMs: options.retentionEveryMs } : {}),
          ...(options.faults ? { faults: options.faults } : {}),
        });
        catalogs.set(system.id, catalog);
        await api.addSystemEndpoints(system.id, catalogEndpoints(system, catalog, systemLog));
      }
      if (system.roles.includes(Role.Scrape)) {
        const scrape = createScrapeSide({
          sink: sink.nc,
          sinkSystem: sink.systemTarget,
          system,
          nodeId,
          metrics,
          log: systemLog,
          ...(options.faults ? { faults: options.faults } : {}),
        });
        scrapes.set(system.id, scrape);
        await api.addSystemEndpoints(system.id, scrapeEndpoints(system, scrape));
      }
    }
    await api.answerPing();
    for (const system of config.systems) {
      stopIfAborted();
      systems.push(
        await startSystemPipeline({
          sink: sink.nc,
          replicas: config.sink.replicas,
          system,
          catalog: catalogs.get(system.id),
          scrape: scrapes.get(system.id),
          ...(options.signal ? { signal: options.signal } : {}),
        }),
      );
    }
    stopIfAborted();
  } catch (err) {
    if (options.signal?.aborted) log.info("stopping what had started");
    for (const s of systems.reverse()) await s[Symbol.asyncDispose]();
    // Sides whose pipeline never started (stopping one twice is a no-op).
    for (const scrape of scrapes.values()) await scrape[Symbol.asyncDispose]();
    for (const catalog of catalogs.values()) await catalog[Symbol.asyncDispose]();
    await api?.[Symbol.asyncDispose]();
    await notifier?.[Symbol.asyncDispose]();
    await sink[Symbol.asyncDispose]();
    throw err;
  }
  const startedApi = api;
  const startedNotifier = notifier;
  log.info(
    { url: sink.url, embedded: sink.embedded !== undefined, systems: config.systems.map((s) => s.id) },
    "node started",
  );
  return {
    nodeId,
    url: sink.url,
    embedded: sink.embedded !== undefined,
    systems,
    discovery,
    async [Symbol.asyncDispose]() {
      for (const s of [...systems].reverse()) await s[Symbol.asyncDispose]();
      await startedApi[Symbol.asyncDispose]();
      await startedNotifier[Symbol.asyncDispose]();
      await sink[Symbol.asyncDispose]();
      log.info("node stopped");
    },
  };
}
