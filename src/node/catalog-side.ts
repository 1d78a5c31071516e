import type { NatsConnection } from "@nats-io/nats-core";
import { consumeCommits, type CommitDelivery } from "../bus/index.ts";
import {
  applyRetention,
  backupStatementFor,
  explainReadOnly,
  foldEpoch,
  installCheckMacros,
  queryFindingsPage,
  runEpochChecks,
  latestEpochFindings,
  firingSince,
  listColumns,
  listMacros,
  listSchemas,
  listTables,
  openArrowScan,
  openCatalog,
  runReadOnlyQuery,
  type Catalog,
  type EpochCheckResult,
} from "../catalog/index.ts";
import {
  checkInfo,
  checkListGroups,
  epochCheckStatements,
  findCheck,
  findingsRowsSql,
  installStatements,
} from "../checks/index.ts";
import type { SystemConfig } from "../config/index.ts";
import { CatalogUnavailableError, parseEpoch } from "../domain/index.ts";
import { publishEpoch, publishTransitions } from "../feed/index.ts";
import { openFindingsBaseline, startFindingsTracker, type FindingsTracker } from "../findings/index.ts";
import { parseJsonExact, type Logger, type NodeMetrics } from "../lib/index.ts";
import { jetstreamManager } from "@nats-io/jetstream";
import { systemAssets } from "../protocol/index.ts";
import type { Notifier } from "../notify/index.ts";
import { catalogOpsPort, startMemoryFeed } from "./catalog-ops.ts";
import type {
  OpsPort,
  BackupStreamPort,
  ChecksPort,
  DiscoveryPort,
  QueryPort,
  QueryStreamPort,
} from "../api/index.ts";

export interface CatalogSide extends AsyncDisposable {
  readonly query: QueryPort;
  readonly queryStream: QueryStreamPort;
  readonly backupStream: BackupStreamPort;
  readonly discovery: DiscoveryPort;
  readonly checks: ChecksPort;
  /** ops.sizing, ops.memory, ops.storage and usage.record. */
  readonly ops: OpsPort;
  /** The reason the database would not open, while it is not open. */
  readonly error: string | undefined;
  /** Resolves once the consumer has folded (or skipped) every marker up to `seq`. */
  readonly foldedThrough: () => number;
}

/**
 * How long the server waits for an ack before redelivering a marker. A fold in progress
 * says `working` every third of it; a node that died holding a marker gets it back this soon.
 */
const ACK_WAIT_MS = 15_000;
/** How often retention may run. */
const RETENTION_EVERY_MS = 60_000;
/** Delay before a marker whose fold failed is tried again. */
const RETRY_MS = 5_000;

/**
 * ③ The catalog side of one system: opens its DuckDB file, consumes commit markers in
 * order, folds each epoch in one transaction, announces it on feed.epoch, then acks.
 * A crash anywhere before the ack redelivers the marker; the fold skips an epoch it
 * already has, so nothing is lost or counted twice.
 */
export async function startCatalogSide(options: {
  sink: NatsConnection;
  system: SystemConfig;
  nodeId: string;
  dataDir: string;
  notifier: Notifier;
  metrics: NodeMetrics;
  log: Logger;
  faults?: { afterFold?: () => void };
}): Promise<CatalogSide> {
  const { sink, system, nodeId, log } = options;
  let catalog: Catalog | undefined;
  let error: string | undefined;
  try {
    catalog = await openCatalog({
      path: `${options.dataDir}/${system.id}.duckdb`,
      db: system.db,
      logger: log,
    });
    // The check macros are (re)created at every start, so a new natsmon brings its own SQL.
    await installCheckMacros(catalog, installStatements());
  } catch (err) {
    error = err instanceof Error ? err.message : String(err);
    log.error({ err }, "catalog database would not open; queries answer 503 until it does");
  }

  let lastSeq = 0;
  // db.retention runs between folds, at most once a minute; 0 keeps everything.
  let lastRetention = 0;
  const retention = async () => {
    if (!catalog || system.db.retentionMs <= 0 || Date.now() - lastRetention < RETENTION_EVERY_MS) return;
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

  let loop: Promise<void> = Promise.resolve();
  let stopConsumer = async () => {};
  if (catalog) {
    const open = catalog;
    // ⑤ The finding feed runs only where the catalog opened at start (spec: a catalog that
    // opens later resumes indexing, and its feed after a restart).
    const tracker = await startFindingsTracker({
      store: await openFindingsBaseline(sink, system.id, log),
      disabledChecks: system.disabledChecks,
      latestFindings: () => latestEpochFindings(open),
      firingSince: (epoch) => firingSince(open, epoch.toISOString()),
      log,
    });
    log.info({ baseline: tracker.start, firing: tracker.firing().size }, "findings baseline ready");
    const consumer = await consumeCommits(sink, system.id, { ackWaitMs: ACK_WAIT_MS });
    // Scrape stream lag: commit markers not yet consumed.
    const assets = systemAssets(system.id);
    options.metrics.addCommitLag(async () => [
      {
        labels: { system: system.id },
        value: (
          await (await jetstreamManager(sink)).consumers.info(assets.scrapeStream, assets.catalogConsumer)
        ).num_pending,
      },
    ]);
    stopConsumer = () => consumer.stop();
    loop = (async () => {
      for await (const delivery of consumer.commits) {
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
        });
        lastSeq = delivery.seq;
        await retention();
      }
    })().catch((err: unknown) => log.error({ err }, "commit consumer stopped"));
  }

  // Every db endpoint answers 503 with the reason while the database is not open.
  const opened = (): Catalog => {
    if (!catalog) throw new CatalogUnavailableError(`catalog of system ${system.id} is not open: ${error}`);
    return catalog;
  };
  const timeoutMs = system.db.queryTimeoutMs;
  const query: QueryPort = {
    query: (request, format) => {
      return runReadOnlyQuery(opened(), request, {
        maxRows: system.db.queryMaxRows,
        timeoutMs: system.db.queryTimeoutMs,
        format,
      });
    },
  };
  // db.query.stream reads on the query connections, behind the read-only guard; each
  // DuckDB step (and the wait for a connection) is bounded by db.query-timeout.
  const queryStream: QueryStreamPort = {
    limits: system.db.queryStream,
    open: (request, signal) =>
      openArrowScan(opened(), request, { pool: "query", signal, stepTimeoutMs: system.db.queryTimeoutMs }),
  };
  // db.backup.stream: the catalog builds the statement from the table and window (trusted,
  // no read-only guard, no row cap) and reads on the backup connection, apart from queries.
  const backupStream: BackupStreamPort = {
    limits: system.db.queryStream,
    open: async (request, signal) => {
      const open = opened();
      const statement = await backupStatementFor(open, request, signal);
      return openArrowScan(
        open,
        { sql: statement.sql, params: [...statement.params] },
        { pool: "backup", trusted: true, signal, stepTimeoutMs: system.db.queryTimeoutMs },
      );
    },
  };
  const discovery: DiscoveryPort = {
    explain: async (request) => explainReadOnly(opened(), request, { timeoutMs }),
    schemas: async () => listSchemas(opened(), timeoutMs),
    tables: async (schema) => listTables(opened(), timeoutMs, schema),
    columns: async (schema, table) => listColumns(opened(), timeoutMs, schema, table),
    macros: async (schema) => listMacros(opened(), timeoutMs, schema),
  };

  const checks: ChecksPort = {
    list: () => checkListGroups(system),
    info: (code) => checkInfo(findCheck(code), system),
    findingsPage: async (request) =>
      queryFindingsPage(opened(), {
        rowsSql: findingsRowsSql(findCheck(request.code), system),
        duration: request.duration,
        page: request.page,
        pageSize: request.pageSize,
        format: request.format,
        timeoutMs,
      }),
  };

  const ops = catalogOpsPort(system, nodeId, opened);
  const memoryFeed = startMemoryFeed(sink, system, () => catalog, log);

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
    async [Symbol.asyncDispose]() {
      await memoryFeed[Symbol.asyncDispose]();
      await stopConsumer();
      await loop;
      await catalog?.[Symbol.asyncDispose]();
    },
  };
}

async function handleCommit(
  catalog: Catalog,
  delivery: CommitDelivery,
  ctx: {
    sink: NatsConnection;
    tracker: FindingsTracker;
    notifier: Notifier;
    metrics: NodeMetrics;
    system: SystemConfig;
    systemId: string;
    nodeId: string;
    log: Logger;
    faults: { afterFold?: () => void } | undefined;
  },
): Promise<void> {
  const { marker, seq } = delivery;
  const log = ctx.log.child({ epoch: marker.epoch, seq });
  try {
    const keepAlive = setInterval(() => delivery.working(), ACK_WAIT_MS / 3);
    let result;
    try {
      const parts = await delivery.readParts();
      const replies = parts.map((part) => ({
        source: part.source,
        server: part.server,
        ...(part.page ? { page: part.page } : {}),
        body: "text" in part ? parseBody(part.text) : errorEnvelope(part.missing),
      }));
      result = await foldEpoch(catalog, { markerSeq: seq, marker, replies });
    } finally {
      clearInterval(keepAlive);
    }
    ctx.faults?.afterFold?.();
    if (result.status === "folded") {
      log.info({ rows: result.rows, ms: Math.round(result.ms) }, "epoch folded");
      ctx.metrics.epochFolded(ctx.systemId, result.ms / 1000, result.rows);
      publishEpoch(ctx.sink, ctx.systemId, ctx.nodeId, parseEpoch(marker.epoch));
    } else {
      log.info({ reason: result.reason }, "epoch already folded; its checks run if they have not");
    }
    // ④ Checks over the epoch; a redelivered epoch whose checks ran reads them back. While
    // newer epochs wait (a backlog after downtime, or epochs arriving faster than checks run),
    // only folding keeps up: the checks run on the newest epoch, so findings stay current and
    // the catalog does not fall further behind. Every epoch is still folded.
    if (delivery.behind > 0) {
      log.debug({ behind: delivery.behind }, "newer epochs are waiting; checks run on the newest");
      await delivery.ack();
      return;
    }
    const checked = await runEpochChecks(catalog, marker.epoch, epochCheckStatements(ctx.system));
    if (checked?.ran) {
      logChecks(log, checked);
      ctx.metrics.checksRan(ctx.systemId, checked.ms / 1000, checked.failed.length);
    }
    // ⑤ Transitions since the baseline, stored in the notification outbox and then saved to
    // KV before they are published: a crash before the save redelivers the marker and writes
    // the same outbox entries again (deduplicated); a crash after it finds nothing new.
    if (checked) {
      const epoch = parseEpoch(marker.epoch);
      const transitions = await ctx.tracker.onEpoch({ epoch, ...checked }, (found) =>
        ctx.notifier.enqueue(ctx.systemId, epoch, found),
      );
      publishTransitions(ctx.sink, ctx.systemId, transitions);
      for (const status of ["firing", "resolved", "changed"] as const)
        ctx.metrics.transitions(ctx.systemId, status, transitions.filter((t) => t.status === status).length);
      if (transitions.length > 0)
        log.info({ transitions: transitions.length }, "finding transitions published");
    }
    await delivery.ack();
  } catch (err) {
    // The marker comes back after a pause; the fold is one transaction, so a retry starts clean.
    log.error({ err }, "epoch fold failed; retrying");
    delivery.nak(RETRY_MS);
  }
}

/** Per-check times at debug, a summary with the slowest at info, each failing check at error. */
function logChecks(log: Logger, result: EpochCheckResult): void {
  for (const t of result.timings) log.debug({ code: t.code, ms: round(t.ms), rows: t.rows }, "check ran");
  for (const f of result.failed)
    log.error({ code: f.code, error: f.error }, "check failed; skipped for this epoch");
  const slowest = [...result.timings]
    .sort((a, b) => b.ms - a.ms)
    .slice(0, 3)
    .map((t) => `${t.code} ${round(t.ms)} ms`);
  log.info(
    { ms: round(result.ms), checks: result.timings.length, findings: result.findings.length, slowest },
    "checks ran",
  );
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

/** A part that cannot be read becomes an error reply, which the fold records in hx.epochs.errors. */
function errorEnvelope(description: string): unknown {
  return { error: { code: 0, description } };
}

function parseBody(text: string): unknown {
  try {
    return parseJsonExact(text);
  } catch {
    return errorEnvelope("scrape part is not valid JSON");
  }
}
