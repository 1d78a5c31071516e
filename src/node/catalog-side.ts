import { startEpochWatch } from "./epoch-watch.ts";
import type { NatsConnection } from "@nats-io/nats-core";
import { commitProgress, consumeCommits, type CommitDelivery, type ServerRestart } from "../bus/index.ts";
import {
  applyRetention,
  installCheckMacros,
  latestEpochFindings,
  catalogIdentity,
  firingSince,
  natsFiguresReader,
  openCatalog,
  type Catalog,
  type NatsFiguresScope,
} from "../catalog/index.ts";
import { installStatements } from "../checks/index.ts";
import type { SystemConfig } from "../config/index.ts";
import { CatalogUnavailableError } from "../domain/index.ts";
import { openFindingsBaseline, startFindingsTracker, type FindingsTracker } from "../findings/index.ts";
import type { Logger, NodeMetrics } from "../lib/index.ts";
import { jetstreamManager } from "@nats-io/jetstream";
import { systemAssets } from "../protocol/index.ts";
import type { Notifier } from "../notify/index.ts";
import type { ScrapeFaults } from "../scrape/index.ts";
import { catalogOpsPort, startMemoryFeed } from "./catalog-ops.ts";
import { catalogReadPorts, type CatalogReadPorts } from "./catalog-ports.ts";
import {
  ACK_WAIT_MS,
  handBackLeft,
  handleCommit,
  recordFiring,
  syncNotifications,
} from "./commit-handler.ts";
import { commitConsumerStatusLog } from "./commit-consumer-log.ts";
import { watchMarkerChain } from "./lost-epochs.ts";
import type { OpsPort } from "../api/index.ts";

/** The db endpoints' ports (catalog-ports.ts), and the catalog's ops. */
export interface CatalogSide extends CatalogReadPorts, AsyncDisposable {
  /** ops.sizing, ops.memory, ops.storage and usage.record. */
  readonly ops: OpsPort;
  /** The reason the database would not open, while it is not open. */
  readonly error: string | undefined;
  /** Resolves once the consumer has folded (or skipped) every marker up to `seq`. */
  readonly foldedThrough: () => number;
  /** The scraper's interval as the last commit marker carried it (ns); undefined before one. */
  readonly scrapeIntervalNs: () => number | undefined;
  /**
   * Opens the database, seeds the findings baseline and starts consuming commit markers.
   * Until the database is open, every port that needs it throws 503 saying it is opening.
   */
  start(): Promise<void>;
}

/** How often retention may run. */
const RETENTION_EVERY_MS = 60_000;
/** Spec (Limits): a failed database is tried again once a minute. */
const REOPEN_MS = 60_000;

/**
 * ③ The catalog side of one system: opens its DuckDB file, consumes commit markers in
 * order, folds each epoch in one transaction, announces it on feed.epoch, then acks.
 * A crash anywhere before the ack redelivers the marker; the fold skips an epoch it
 * already has, so nothing is lost or counted twice.
 *
 * Made in two steps: its ports exist at once, answering 503 "opening", so node/ can serve
 * them as soon as $MON.ping lists the catalog role; `start()` then opens the database.
 */
export function createCatalogSide(options: {
  sink: NatsConnection;
  system: SystemConfig;
  nodeId: string;
  dataDir: string;
  notifier: Notifier;
  metrics: NodeMetrics;
  /** node.metrics-nats: the system's figures GET /metrics serves from the catalog (default all). */
  natsFigures?: NatsFiguresScope;
  log: Logger;
  faults?: ScrapeFaults;
  /** True while this node still holds the catalog role (RoleClaims.confirm). */
  confirmRole?: () => Promise<boolean>;
  /** Why the sink does not answer, when its storage is known to be the reason. */
  sinkFault?: () => string | undefined;
  /** When and why natsmon last restarted its embedded sink, if it did (EmbeddedSink.lastRestart). */
  sinkRestart?: () => ServerRestart | undefined;
  /** How often a catalog that would not open is tried again (spec: once a minute). */
  reopenMs?: number;
  /** How often retention runs (once a minute). */
  retentionEveryMs?: number;
  /** This node's clock (ms) as a marker's epoch is checked against it (default Date.now). */
  now?: () => number;
  /** How long the sink waits for a marker's ack before it redelivers it (default ACK_WAIT_MS). */
  ackWaitMs?: number;
}): CatalogSide {
  const { sink, system, nodeId, log } = options;
  const startedAt = new Date();
  let catalog: Catalog | undefined;
  let error: string | undefined;
  const tryOpen = async (): Promise<Catalog | undefined> => {
    let opened: Catalog | undefined;
    try {
      opened = await openCatalog({
        path: `${options.dataDir}/${system.id}.duckdb`,
        db: system.db,
        logger: log,
      });
      // The check macros are (re)created at every start, so a new natsmon brings its own SQL.
      await installCheckMacros(opened, installStatements());
      return opened;
    } catch (err) {
      // Opened but unusable (its macros failed): close it, so the next try can open it again.
      try {
        await opened?.[Symbol.asyncDispose]();
      } catch {
        // Closing a database that failed half-way may fail too; the error above is the one to report.
      }
      error = err instanceof Error ? err.message : String(err);
      return undefined;
    }
  };
  let lastSeq = 0;
  let scrapeIntervalNs: number | undefined;
  // db.retention runs once the catalog opens, then at most once a minute: between folds, and
  // on a timer, so a catalog that nothing folds into (its system unreachable, its scraper
  // stopped) still drops what is past retention. 0 keeps everything.
  const retentionEveryMs = options.retentionEveryMs ?? RETENTION_EVERY_MS;
  let lastRetention = 0;
  let retentionTimer: NodeJS.Timeout | undefined;
  let retaining: Promise<void> = Promise.resolve();
  const retention = async () => {
    // A tenth of slack, so the timer's own tick is not skipped for being a few ms early.
    const due = Date.now() - lastRetention >= retentionEveryMs * 0.9;
    if (!catalog || stopped || system.db.retentionMs <= 0 || !due) return;
    lastRetention = Date.now();
    try {
      const removed = await applyRetention(catalog, new Date(Date.now() - system.db.retentionMs));
      if (removed.epochs > 0 || removed.identities > 0 || removed.ips > 0) {
        log.info(removed, "retention removed old epochs and ended identities");
      }
    } catch (err) {
      log.error({ err }, "retention failed; it runs again in a minute");
    }
  };
  /** One retention at a time, whoever asks; stop() waits for the last. */
  const runRetention = () => (retaining = retaining.then(retention));

  let loop: Promise<void> = Promise.resolve();
  let stopConsumer = async () => {};
  /** Consumes commit markers into the open catalog, from wherever the stream still reaches. */
  const startIndexing = async (open: Catalog, tracker: FindingsTracker | undefined) => {
    void runRetention();
    retentionTimer = setInterval(() => void runRetention(), retentionEveryMs);
    // Markers the scrape stream dropped before they were read: epochs never folded, reported.
    const chain = watchMarkerChain({ sink, system, log, metrics: options.metrics, now: options.now });
    const consumer = await consumeCommits(sink, system.id, {
      ackWaitMs: options.ackWaitMs ?? ACK_WAIT_MS,
      onStatus: commitConsumerStatusLog({
        log,
        sinkFault: () => options.sinkFault?.(),
        setAside: (seq) => chain.setAside(seq),
      }),
    });
    await chain.start(open, consumer.ackedThrough);
    // Scrape stream lag: commit markers not yet consumed.
    const assets = systemAssets(system.id);
    const jsm = await jetstreamManager(sink);
    options.metrics.addCommitLag(async () => [
      {
        labels: { system: system.id },
        value: (await jsm.consumers.info(assets.scrapeStream, assets.catalogConsumer)).num_pending,
      },
    ]);
    const watch = startEpochWatch({
      intervalMs: () => (scrapeIntervalNs ?? system.scraper.intervalMs * 1_000_000) / 1_000_000,
      progress: (after) => commitProgress(sink, system.id, after),
      ...(options.sinkRestart ? { sinkRestart: options.sinkRestart } : {}),
      log,
    });
    stopConsumer = async () => {
      await watch.stop();
      await consumer.stop();
    };
    loop = (async () => {
      for await (const delivery of consumer.commits) {
        watch.seen(delivery.seq);
        chain.seen(delivery);
        await handleCommit(open, delivery, {
          sink,
          tracker,
          notifier: options.notifier,
          metrics: options.metrics,
          system,
          systemId: system.id,
          nodeId,
          log,
          faults: options.faults,
          confirmRole: options.confirmRole,
          startedAt,
          now: options.now,
          stopping: stopping.signal,
          leave: (delivery) => (left = delivery),
        });
        watch.folded();
        lastSeq = delivery.seq;
        scrapeIntervalNs = delivery.marker.scrape_interval_ns ?? scrapeIntervalNs;
        await runRetention();
      }
    })().catch((err: unknown) => log.error({ err }, "commit consumer stopped"));
  };
  let reopenTimer: NodeJS.Timeout | undefined;
  let reopening: Promise<void> = Promise.resolve();
  let stopped = false;
  /** Aborted when the side stops: the epoch being handled goes no further than it has. */
  const stopping = new AbortController();
  /** The marker of the epoch the stop left, handed back once the pull has stopped. */
  let left: CommitDelivery | undefined;
  const start = async () => {
    const first = await tryOpen();
    if (stopped) {
      // Stopped while it opened (the node's start failed): nothing else will close it.
      await first?.[Symbol.asyncDispose]();
      return;
    }
    if (!first) {
      log.error(
        { error, retry_in_ms: options.reopenMs ?? REOPEN_MS },
        "catalog database would not open; queries answer 503 until it does, and it is tried again every minute",
      );
      retryOpen();
      return;
    }
    // Queries answer from here on: seeding the finding feed and starting the consumer do not hold them up.
    catalog = first;
    const open = first;
    // ⑤ The finding feed runs only where the catalog opened at start (spec: one opening later resumes indexing; its feed after a restart).
    const tracker = await startFindingsTracker({
      store: await openFindingsBaseline(sink, system.id, log),
      catalogId: await catalogIdentity(open),
      disabledChecks: system.disabledChecks,
      latestFindings: () => latestEpochFindings(open),
      firingSince: (epoch) => firingSince(open, epoch.toISOString()),
      log,
    });
    // The catalog's copy of the firing set (grades) starts from the baseline as loaded (but for
    // entries in another catalog file's pks: those are established or matched at the first epoch).
    if (!tracker.establishing()) await recordFiring(open, tracker);
    await syncNotifications(options.notifier, system.id, tracker, log);
    await startIndexing(open, tracker);
  };
  // Spec (Catalog database): retried once a minute; once open, queries answer and indexing
  // resumes without a restart. Checks run and are stored; transitions wait for a restart.
  const retryOpen = () => {
    reopenTimer = setInterval(() => {
      reopening = reopening.then(async () => {
        if (catalog || stopped) return;
        const open = await tryOpen();
        if (!open) {
          log.warn({ error }, "catalog database still will not open; trying again in a minute");
          return;
        }
        if (stopped) {
          await open[Symbol.asyncDispose]();
          return;
        }
        clearInterval(reopenTimer);
        catalog = open;
        error = undefined;
        log.info(
          "catalog database opened: queries answer and indexing resumes; the finding feed resumes after a restart",
        );
        await startIndexing(open, undefined);
      });
    }, options.reopenMs ?? REOPEN_MS);
  };

  // Every db endpoint answers 503 with the reason while the database is not open: still
  // opening at start, or the error it would not open with (until a retry opens it).
  const opened = (): Catalog => {
    if (catalog) return catalog;
    throw new CatalogUnavailableError(
      error === undefined
        ? `the catalog of system ${system.id} is opening; retry in a moment`
        : `catalog of system ${system.id} is not open: ${error}`,
    );
  };
  const { query, queryStream, backupStream, discovery, checks } = catalogReadPorts(system, opened);
  const ops = catalogOpsPort(system, nodeId, opened);
  const memoryFeed = startMemoryFeed(sink, system, () => catalog, log);
  const figures = options.natsFigures ?? "all";
  if (figures !== "off")
    options.metrics.addSystemFigures(natsFiguresReader(system.id, figures, () => catalog, log));

  let starting: Promise<void> | undefined;
  let stopDone: Promise<void> | undefined;
  /** Stops whatever start() got to, once it got there. */
  const stop = async () => {
    stopped = true;
    stopping.abort();
    await starting?.catch(() => undefined);
    clearInterval(reopenTimer);
    clearInterval(retentionTimer);
    await reopening;
    await retaining;
    await memoryFeed[Symbol.asyncDispose]();
    await stopConsumer();
    await loop;
    await handBackLeft(left, log);
    await catalog?.[Symbol.asyncDispose]();
  };
  return {
    query,
    queryStream,
    backupStream,
    discovery,
    checks,
    ops,
    get error() {
      return error;
    },
    foldedThrough: () => lastSeq,
    scrapeIntervalNs: () => scrapeIntervalNs,
    start: () => (starting ??= start()),
    // Once only: a node whose start failed stops its catalog sides, some of them twice.
    [Symbol.asyncDispose]: () => (stopDone ??= stop()),
  };
}
