import { hostname } from "node:os";
import type { Config } from "../config/index.ts";
import { startRoleClaims, type RoleClaims } from "../bus/index.ts";
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
import { DEFAULT_SENDER_TIMING, startNotifier, type Notifier, type SenderTiming } from "../notify/index.ts";
import { Role } from "../domain/index.ts";
import type { DiscoveryReply, RoleClaim } from "../protocol/index.ts";
import { createMetrics, VERSION, type Logger } from "../lib/index.ts";
import type { ScrapeFaults } from "../scrape/index.ts";
import { catalogEndpoints } from "./catalog-endpoints.ts";
import { createCatalogSide, type CatalogSide } from "./catalog-side.ts";
import { scrapeEndpoints } from "./scrape-endpoints.ts";
import { createScrapeSide, type ScrapeSide } from "./scrape-side.ts";
import { startSystemPipeline, type SystemPipeline } from "./pipeline.ts";
import { startSink, type Sink } from "./sink.ts";
import { claimRoles, describeHolder, type RoleGrant } from "./claim-roles.ts";
import { sinkStorageCause, startDiskWatch, type DiskWatch } from "./data-dir-space.ts";
import { embeddedSinkRecovery } from "./sink-recovery.ts";
import { lockDataDir } from "./data-dir-lock.ts";
import { listenForMetrics, type MetricsListener } from "./metrics-http.ts";

export interface RunningNode extends AsyncDisposable {
  readonly nodeId: string;
  /** Where clients reach the bus this node serves on. */
  readonly url: string;
  readonly embedded: boolean;
  /** Where the node serves its metrics over HTTP (node.metrics-listen); undefined when it does not. */
  readonly metricsUrl: string | undefined;
  /** The pipelines of the systems it serves a role of. */
  readonly systems: readonly SystemPipeline[];
  discovery(): DiscoveryReply;
  /**
   * Resolves, with why, if the node loses a role it serves to another node (see
   * bus/role-claims.ts): the side has stopped, and the caller stops the node, since its
   * endpoints cannot be withdrawn one role at a time. Also when natsmon gives up starting its
   * embedded nats-server again (bus/embedded-supervisor.ts): the node has no bus.
   */
  readonly lost: Promise<string>;
}

/**
 * Starts a node: the lock of its data dir (refused while another live node holds it), the sink
 * bus (embedded when none is configured), the notifier, the micro service, the claims of its
 * roles (a role another live node serves is left unserved), the discovery ping with every
 * claimed side's endpoints, then each system's pipeline.
 * Disposal runs in reverse: systems, API and metrics listener, claims, notifier, bus, the data dir's lock.
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
    /** Named in this node's role claims (default: the OS hostname). */
    host?: string;
    /** The catalog sides' clock (ms), which a commit marker's epoch is checked against (default Date.now). */
    catalogNow?: () => number;
    /** How long the sink waits for a catalog side's ack of a commit marker before redelivering it (default 15 s). */
    commitAckWaitMs?: number;
    /** The waits between failed starts of the embedded nats-server after it exited (default 1 s, 2 s, 5 s, 10 s, 30 s). */
    sinkRestartDelaysMs?: readonly number[];
  },
): Promise<RunningNode> {
  const nodeId = config.node.id;
  const log = options.log.child({ node: nodeId });
  // Before anything in the data dir is touched: another node's embedded server would be taken
  // for a crashed node's orphan and killed, and its DuckDB files are locked by that node.
  const dataDirLock = await lockDataDir(config.node.dataDir, log);
  let sink: Sink;
  try {
    sink = await startSink(
      config,
      nodeId,
      log,
      options.sinkRestartDelaysMs ? { restartDelaysMs: options.sinkRestartDelaysMs } : {},
    );
  } catch (err) {
    await dataDirLock[Symbol.asyncDispose]();
    throw err;
  }
  const systems: SystemPipeline[] = [];
  const metrics = createMetrics(nodeId);
  let grant: RoleGrant = { served: new Map(), refused: new Map() };
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
        const roles = grant.served.get(system.id) ?? [];
        const refused = grant.refused.get(system.id) ?? [];
        return {
          id: system.id,
          roles: [...roles],
          ...(roles.includes(Role.Scrape) && Object.keys(system.metadata).length > 0
            ? { metadata: { ...system.metadata } }
            : {}),
          ...(running?.catalog?.error ? { catalog_error: running.catalog.error } : {}),
          ...scraperError(scrapes.get(system.id)),
          ...(refused.length > 0
            ? { refused: refused.map((r) => ({ ...r, held_by: { ...r.held_by } })) }
            : {}),
        };
      }),
      ...(Object.keys(config.node.metadata).length > 0 ? { metadata: { ...config.node.metadata } } : {}),
    };
  };
  let api;
  let notifier: Notifier | undefined;
  const catalogs = new Map<string, CatalogSide>();
  const scrapes = new Map<string, ScrapeSide>();
  let claims: RoleClaims | undefined;
  let onLost: (reason: string) => void = () => {};
  const lost = new Promise<string>((resolve) => (onLost = resolve));
  // Logged as fatal where it gives up; the caller stops the node and exits 1.
  void sink.embedded?.gaveUp.then((reason) => onLost(reason));
  void dataDirLock.lost.then((reason) => {
    log.error({ data_dir: config.node.dataDir }, reason);
    onLost(reason);
  });
  const loseRole = (systemId: string, role: Role, holder: RoleClaim | undefined) => {
    const reason =
      `this node no longer holds the ${role} role of system ${systemId}: ` +
      `${holder ? describeHolder(holder, nodeId) : "another node"} holds it now (this node's claim lapsed while it ` +
      "was stalled or cut off from the sink, or was overwritten); this node stops, so that one node serves the role";
    log.error({ system: systemId, role, holder_node: holder?.node_id, holder_host: holder?.host }, reason);
    // Stopped at once, ahead of the node: it must not write or fold another epoch.
    const side = role === Role.Scrape ? scrapes.get(systemId) : catalogs.get(systemId);
    if (side) {
      Promise.resolve(side[Symbol.asyncDispose]()).catch((err: unknown) =>
        log.error({ err }, "stopping the side failed"),
      );
    }
    onLost(reason);
  };
  const stopIfAborted = () => options.signal?.throwIfAborted();
  // The embedded sink restarted when a full disk left it stuck, and why it takes no messages
  // when its storage is the reason, for both sides' logs.
  const sinkRecovery = sink.embedded
    ? embeddedSinkRecovery({ embedded: sink.embedded, nc: sink.nc, log })
    : undefined;
  const sinkFault = () => sinkStorageCause(sink.embedded, config.node.dataDir, sinkRecovery?.diskFullSince());
  let disk: DiskWatch | undefined;
  let metricsHttp: MetricsListener | undefined;
  try {
    stopIfAborted();
    // The data dir's disk: watched, each reading handed to the sink's recovery.
    disk = startDiskWatch({
      dir: config.node.dataDir,
      log,
      metrics,
      ...(sinkRecovery ? { onReading: sinkRecovery.onReading } : {}),
    });
    // ⑥ The node's endpoint senders start before any system produces transitions.
    notifier = await startNotifier({
      nc: sink.nc,
      nodeId,
      replicas: config.sink.replicas,
      endpoints: config.notifications.endpoints,
      catalogSystems: config.systems.filter((s) => s.roles.includes(Role.Catalog)).map((s) => s.id),
      disabledChecks: new Map(config.systems.map((s) => [s.id, s.disabledChecks])),
      body: {
        describe: checkDescription,
        externalUrl: config.web.externalUrl,
        systemCount: config.systems.length,
      },
      userAgent: `natsmon/${VERSION}`,
      log,
      metrics,
      timing: {
        ...DEFAULT_SENDER_TIMING,
        ...options.notifyTiming,
        freshEpochWaitMs: freshEpochWait(config, options.notifyTiming),
      },
    });
    stopIfAborted();
    api = await startApi(sink.nc, { nodeId, discovery, log, metrics });
    if (config.node.metricsListen)
      metricsHttp = await listenForMetrics(config.node.metricsListen, metrics, log, {
        ...(config.node.metricsTokenFile ? { tokenFile: config.node.metricsTokenFile } : {}),
        ...(config.node.metricsTls ? { tls: config.node.metricsTls } : {}),
      });
    const nodeOps = nodeOpsPort({
      nodeId,
      sink,
      metrics,
      replicas: config.sink.replicas,
      ...(options.updateRegistry ? { registry: options.updateRegistry } : {}),
    });
    await api.addNodeEndpoints({
      "ops.version": opsVersionHandler(nodeOps),
      "ops.version.check": opsVersionCheckHandler(nodeOps),
      "ops.nats.info": opsNatsInfoHandler(nodeOps),
      "ops.pprof": opsPprofHandler(nodeOps),
      "ops.metrics": opsMetricsHandler(nodeOps),
    });
    // One live node per role of a system on this bus: each role is claimed on the sink
    // before its endpoints are served, so a second node for it serves none of them.
    if (config.systems.some((s) => s.roles.length > 0)) {
      stopIfAborted();
      claims = await startRoleClaims({
        nc: sink.nc,
        replicas: config.sink.replicas,
        holder: { nodeId, host: options.host ?? hostname(), version: VERSION },
        log,
        onLost: loseRole,
        sinkRestart: () => sink.embedded?.lastRestart(),
      });
      grant = await claimRoles(config.systems, claims, log);
    }
    // $MON.ping lists every system with its roles, so each side's endpoints are served before
    // ping answers: 503 "opening" or "starting" until its pipeline has started it, rather than
    // no responder at all (spec: each db endpoint answers 503 while it is not open).
    for (const system of config.systems) {
      const systemLog = log.child({ system: system.id });
      const roles = grant.served.get(system.id) ?? [];
      if (roles.includes(Role.Catalog)) {
        const catalog = createCatalogSide({
          sink: sink.nc,
          system,
          nodeId,
          dataDir: config.node.dataDir,
          notifier,
          metrics,
          natsFigures: config.node.metricsNats,
          log: systemLog,
          ...(options.catalogReopenMs ? { reopenMs: options.catalogReopenMs } : {}),
          ...(options.retentionEveryMs ? { retentionEveryMs: options.retentionEveryMs } : {}),
          ...(options.faults ? { faults: options.faults } : {}),
          ...(options.catalogNow ? { now: options.catalogNow } : {}),
          ...(options.commitAckWaitMs ? { ackWaitMs: options.commitAckWaitMs } : {}),
          ...confirming(claims, system.id, Role.Catalog),
          sinkFault,
          sinkRestart: () => sink.embedded?.lastRestart(),
        });
        catalogs.set(system.id, catalog);
        await api.addSystemEndpoints(system.id, catalogEndpoints(system, catalog, systemLog));
      }
      if (roles.includes(Role.Scrape)) {
        const scrape = createScrapeSide({
          sink: sink.nc,
          sinkSystem: sink.systemTarget,
          system,
          nodeId,
          metrics,
          log: systemLog,
          ...(options.faults ? { faults: options.faults } : {}),
          ...confirming(claims, system.id, Role.Scrape),
          sinkFault,
          externalSink: sink.embedded === undefined,
        });
        scrapes.set(system.id, scrape);
        await api.addSystemEndpoints(system.id, scrapeEndpoints(system, scrape));
      }
    }
    await api.answerPing();
    for (const system of config.systems) {
      stopIfAborted();
      if (!grant.served.has(system.id)) continue;
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
    await disk?.[Symbol.asyncDispose]();
    for (const s of systems.reverse()) await s[Symbol.asyncDispose]();
    // Sides whose pipeline never started (stopping one twice is a no-op).
    for (const scrape of scrapes.values()) await scrape[Symbol.asyncDispose]();
    for (const catalog of catalogs.values()) await catalog[Symbol.asyncDispose]();
    await api?.[Symbol.asyncDispose]();
    await metricsHttp?.[Symbol.asyncDispose]();
    await claims?.[Symbol.asyncDispose]();
    await notifier?.[Symbol.asyncDispose]();
    await sink[Symbol.asyncDispose]();
    await dataDirLock[Symbol.asyncDispose]();
    throw err;
  }
  const startedApi = api;
  const startedNotifier = notifier;
  const heldClaims = claims;
  const watchedDisk = disk;
  const servedMetrics = metricsHttp;
  log.info(
    {
      url: sink.url,
      embedded: sink.embedded !== undefined,
      systems: config.systems.map((s) => s.id),
      roles: Object.fromEntries(grant.served),
    },
    "node started",
  );
  return {
    nodeId,
    url: sink.url,
    embedded: sink.embedded !== undefined,
    metricsUrl: servedMetrics?.url,
    systems,
    discovery,
    lost,
    async [Symbol.asyncDispose]() {
      // First, so that no restart of the embedded server begins while the node stops.
      await watchedDisk?.[Symbol.asyncDispose]();
      for (const s of [...systems].reverse()) await s[Symbol.asyncDispose]();
      await startedApi[Symbol.asyncDispose]();
      await servedMetrics?.[Symbol.asyncDispose]();
      // Released once nothing here serves the roles, so a node that claims them next is alone.
      await heldClaims?.[Symbol.asyncDispose]();
      await startedNotifier[Symbol.asyncDispose]();
      await sink[Symbol.asyncDispose]();
      await dataDirLock[Symbol.asyncDispose]();
      log.info("node stopped");
    },
  };
}

/** A side's check that this node still holds its role, where the node claims roles. */
function confirming(
  claims: RoleClaims | undefined,
  systemId: string,
  role: Role,
): { confirmRole?: () => Promise<boolean> } {
  return claims ? { confirmRole: () => claims.confirm(systemId, role) } : {};
}

/**
 * How long an endpoint whose receiver knows no alert waits for an epoch diffed since start
 * before it is sent the stored firing set: three scrape intervals of the slowest system (the
 * first scrape, its fold and checks, with room for a catalog that opens slowly or a backlog
 * folded first), and never less than two minutes.
 */
function freshEpochWait(config: Config, timing: SenderTiming | undefined): number {
  if (timing?.freshEpochWaitMs !== undefined) return timing.freshEpochWaitMs;
  const slowest = Math.max(0, ...config.systems.map((s) => s.scraper.intervalMs));
  return Math.max(120_000, 3 * slowest);
}

/** A scrape side's problem as the discovery reply carries it (natsmon's addition to the spec's reply). */
function scraperError(scrape: ScrapeSide | undefined): { scraper_error?: string } {
  const problem = scrape?.problem();
  return problem ? { scraper_error: problem } : {};
}
