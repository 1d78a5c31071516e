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
import { createMetrics, type Logger } from "../lib/index.ts";
import type { ScrapeFaults } from "../scrape/index.ts";
import { startSystemPipeline, type SystemPipeline } from "./pipeline.ts";
import { startSink } from "./sink.ts";
import { VERSION } from "./version.ts";

export interface RunningNode extends AsyncDisposable {
  readonly nodeId: string;
  /** Where clients reach the bus this node serves on. */
  readonly url: string;
  readonly embedded: boolean;
  readonly systems: readonly SystemPipeline[];
  discovery(): DiscoveryReply;
}

/**
 * Starts a node: the sink bus (embedded when none is configured), the micro service and
 * the discovery ping, then each system's pipeline. Disposal runs in reverse: systems, API, bus.
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
  },
): Promise<RunningNode> {
  const nodeId = config.node.id;
  const log = options.log.child({ node: nodeId });
  const sink = await startSink(config, nodeId);
  const systems: SystemPipeline[] = [];
  const metrics = createMetrics(nodeId);
  const discovery = (): DiscoveryReply => {
    const firstCatalog = systems.find((s) => s.catalog && !s.catalog.error);
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
  try {
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
    // ⑥ The node's endpoint senders start before any system produces transitions.
    notifier = await startNotifier({
      nc: sink.nc,
      nodeId,
      replicas: config.sink.replicas,
      endpoints: config.notifications.endpoints,
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
    for (const system of config.systems) {
      systems.push(
        await startSystemPipeline({
          sink: sink.nc,
          sinkSystem: sink.systemTarget,
          replicas: config.sink.replicas,
          system,
          nodeId,
          dataDir: config.node.dataDir,
          api,
          notifier,
          metrics,
          log,
          ...(options.catalogReopenMs ? { catalogReopenMs: options.catalogReopenMs } : {}),
          ...(options.faults ? { faults: options.faults } : {}),
        }),
      );
    }
  } catch (err) {
    for (const s of systems.reverse()) await s[Symbol.asyncDispose]();
    await notifier?.[Symbol.asyncDispose]();
    await api?.[Symbol.asyncDispose]();
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
      await startedNotifier[Symbol.asyncDispose]();
      await startedApi[Symbol.asyncDispose]();
      await sink[Symbol.asyncDispose]();
      log.info("node stopped");
    },
  };
}
