import type { NatsConnection } from "@nats-io/nats-core";
import type { AskDiagnostic, ScraperPort } from "../api/index.ts";
import { setTimeout as sleep } from "node:timers/promises";
import {
  CommitMarkerReadError,
  connectNats,
  describeTarget,
  lastCommitMarker,
  probeNats,
  tlsHint,
  scrapeStreamInfo,
  type ConnectTarget,
} from "../bus/index.ts";
import type { SystemConfig } from "../config/index.ts";
import { publishDisconnectBucket } from "../feed/index.ts";
import type { Logger, NodeMetrics } from "../lib/index.ts";
import { ScraperUnavailableError } from "../domain/index.ts";
import { PUBLISH_RETRY_MS, scrapePublisher } from "./scrape-publisher.ts";
import { monitoredPingMs, serviceAccounts } from "./service-accounts.ts";
import { SystemAccountProblem, systemAccountGuard } from "./system-account-guard.ts";
import type { DisconnectHistoryReply, ScraperStatusReply, SinkInfoReply } from "../protocol/index.ts";
import {
  expectedSeed,
  requestDiagnostic,
  startDisconnectTracker,
  startScraper,
  type DisconnectTracker,
  type ScrapeFaults,
  type ScrapeSink,
  type Scraper,
  type ServiceAccount,
} from "../scrape/index.ts";

export interface ScrapeSide extends AsyncDisposable {
  /** The scraper as its ops endpoints see it. */
  readonly port: ScraperPort;
  /** Client disconnect buckets (ops.disconnect.history). */
  readonly disconnectHistory: (since?: number, limit?: number) => DisconnectHistoryReply;
  /** Asks one monitored server for a diagnostic (ops.diagnostics.*). */
  readonly askDiagnostic: AskDiagnostic;
  /** The scrape stream's layout (ops.sink.info). */
  readonly sinkInfo: () => Promise<SinkInfoReply>;
  /**
   * Connects to the monitored system and starts the scraper. A first try that fails is
   * logged and retried in the background, and start() resolves. Until the scraper runs,
   * every port throws 503 saying it is starting, or why it cannot connect.
   */
  start(): Promise<void>;
  /**
   * Why the scraper does not scrape, for the discovery reply: why it cannot connect (while it
   * retries), or the error its last epoch failed with; undefined while it works or starts.
   */
  problem(): string | undefined;
}

/** The `ops.scraper.status` reply of a system's scraper. */
export function scraperStatusOf(systemId: string, scraper: Scraper): ScraperStatusReply {
  const last = scraper.lastEpoch;
  return {
    system_id: systemId,
    state: scraper.state,
    interval: scraper.intervalMs * 1_000_000,
    ...(last
      ? {
          last_epoch: {
            epoch: last.epoch,
            parts: last.parts,
            bytes: last.bytes,
            duration_ms: Math.round(last.ms),
            commit_seq: last.commitSeq,
            servers_expected: last.serversExpected,
            servers_answered: last.serversAnswered,
            servers_partial: last.serversPartial,
            servers_unheard_since: last.serversUnheardSince,
            asked_again: last.askedAgain,
            sources: last.sources.map((s) => ({ ...s, ms: Math.round(s.ms) })),
          },
        }
      : {}),
    ...(scraper.lastError ? { last_error: scraper.lastError } : {}),
  };
}

/** The first wait before connecting again to a monitored system that could not be reached, doubled up to the max. */
const CONNECT_RETRY_FIRST_MS = 1_000;
const CONNECT_RETRY_MAX_MS = 30_000;
/** How often a connect failure that goes on unchanged is logged again. */
const CONNECT_ERROR_REPEAT_MS = 10 * 60_000;
/**
 * How long a starting scrape side waits for the scrape stream's last commit marker (its seed
 * of expected servers) while the sink does not answer, before it starts without it: as long
 * as its first epoch's publishes would wait out the same sink.
 */
const SEED_WAIT_MS = PUBLISH_RETRY_MS;
const SEED_RETRY_MS = [500, 1_000, 2_000, 5_000];

/** The monitored system's connection and the scrape stream's last commit marker. */
interface Connected {
  monitored: NatsConnection;
  previous: Awaited<ReturnType<typeof lastCommitMarker>>;
}

/** What a started scrape side holds. */
interface Running {
  monitored: NatsConnection;
  accounts: (ServiceAccount & { close(): Promise<void> })[];
  scraper: Scraper;
  disconnects: DisconnectTracker;
  /** Checks the connection again after each reconnect. */
  accountWatch: { stop(): Promise<void> };
}

/**
 * ① The scrape side of one system: a connection to the monitored system's system account
 * (or the sink's own, when `nats` is not configured) and the scraper writing epochs to
 * the scrape stream on the sink.
 *
 * Made in two steps: its ports exist at once, answering 503 "starting", so node/ can serve
 * them as soon as $MON.ping lists the scrape role; `start()` then connects and scrapes.
 */
export function createScrapeSide(options: {
  sink: NatsConnection;
  sinkSystem: ConnectTarget | undefined;
  system: SystemConfig;
  nodeId: string;
  metrics: NodeMetrics;
  log: Logger;
  faults?: ScrapeFaults;
  /** True while this node still holds the scrape role (RoleClaims.confirm). */
  confirmRole?: () => Promise<boolean>;
  /** Why the sink does not store messages, when its storage is known to be the reason. */
  sinkFault?: () => string | undefined;
  /** True when the sink is sink.url, whose disks natsmon cannot see; false for the embedded server. */
  externalSink: boolean;
}): ScrapeSide {
  const { system, log } = options;
  const target = system.nats ?? options.sinkSystem;
  if (!target) {
    throw new Error(
      `system ${system.id}: set system.nats (url and system-account credentials) to say what to monitor; ` +
        "only the embedded sink can be monitored without it",
    );
  }
  let running: Running | undefined;
  let stopped = false;
  const retries = new AbortController();
  /** The tries in the background after a first one failed. */
  let retrying: Promise<void> | undefined;
  /** Why the scraper is not running yet, once a try to start it failed. */
  let waiting: string | undefined;
  const started = (): Running => {
    if (running) return running;
    throw new ScraperUnavailableError(
      waiting
        ? `the scraper of system ${system.id} ${waiting}; natsmon keeps retrying (see its log)`
        : `the scraper of system ${system.id} is starting; retry in a moment`,
    );
  };
  const url = describeTarget(target);
  /**
   * The scrape stream's last commit marker, the seed of the servers the first epoch expects.
   * Only the server's "no message found" means there is none; a sink that does not answer is
   * asked again for up to SEED_WAIT_MS, then the scraper starts without the seed, saying so.
   */
  const readPrevious = async () => {
    const giveUpAt = Date.now() + SEED_WAIT_MS;
    for (let attempt = 0; ; attempt++) {
      try {
        const previous = await lastCommitMarker(options.sink, system.id);
        if (attempt > 0) log.info("read the scrape stream's last commit marker");
        return previous;
      } catch (err) {
        if (!(err instanceof CommitMarkerReadError)) throw err;
        if (stopped) return undefined;
        const wait = SEED_RETRY_MS[Math.min(attempt, SEED_RETRY_MS.length - 1)]!;
        if (!err.transient || Date.now() + wait >= giveUpAt) {
          log.warn(
            { error: err.message },
            "the scrape stream's last commit marker was not read, so the scraper starts without its seed: servers " +
              "the last epoch expected that are down now are not expected (no scrape-001 for them) until they " +
              "answer again; check the sink's JetStream (`nats stream info` on the scrape stream, the sink servers' logs)",
          );
          return undefined;
        }
        if (attempt === 0) {
          log.warn(
            { error: err.message, retry_for_ms: SEED_WAIT_MS },
            "cannot read the scrape stream's last commit marker (the servers the scraper expects); the sink does not " +
              "answer (no JetStream leader, or its servers down); retrying before the scraper starts",
          );
        }
        await sleep(wait, undefined, { signal: retries.signal }).catch(() => undefined);
      }
    }
  };
  /** The last connect failure logged: when, and how many retries failed the same way since. */
  let failure: { text: string; at: number; retries: number } | undefined;
  const connectName = `natsmon ${options.nodeId} scrape ${system.id}`;
  const guard = systemAccountGuard({ systemId: system.id, target, timeoutMs: system.scraper.timeoutMs, log });
  /**
   * One try at the connection to the monitored system and the scrape stream's last commit
   * marker; on failure, records and logs why and returns undefined.
   */
  const tryConnect = async (retryInMs: number) => {
    let monitored: NatsConnection | undefined;
    try {
      // A first try that fails fast: the reconnecting connection would hide refused credentials.
      await probeNats(target, connectName);
      monitored = await connectNats(target, connectName, { pingIntervalMs: monitoredPingMs(system) });
      // Connected is not enough: a user of another account connects too, and would scrape
      // next to nothing (only what every account imports) with every epoch marked an error.
      const problem = await guard.check(monitored);
      if (problem !== undefined) throw new SystemAccountProblem(problem);
      const previous = await readPrevious();
      if (waiting) log.info({ url }, "connected to the monitored system");
      waiting = undefined;
      failure = undefined;
      return { monitored, previous };
    } catch (err) {
      await monitored?.drain().catch(() => undefined);
      const reason = err instanceof Error ? err.message : String(err);
      if (err instanceof SystemAccountProblem) {
        // The guard logged it, once; every retry would repeat it.
        waiting = `cannot scrape: ${reason}`;
        log.debug({ url, retry_in_ms: retryInMs }, "the scrape connection is still not usable; retrying");
        return undefined;
      }
      // A sentence ("The server's certificate … nats.tls.ca."): the log's message takes it inside its own.
      const tls = tlsHint(err, target, `system ${system.id}'s nats.tls`);
      waiting = monitored
        ? `cannot read its last commit marker from the sink: ${reason}`
        : `cannot connect to the monitored system at ${url}: ${reason}${tls ? ` ${tls}` : ""}`;
      // A retry failing as the last logged one did (a wrong password, a host that is down) is
      // logged again only every CONNECT_ERROR_REPEAT_MS; a new reason at once.
      const same = failure?.text === waiting ? failure : undefined;
      if (same && Date.now() - same.at < CONNECT_ERROR_REPEAT_MS) {
        same.retries++;
        log.debug({ url, error: reason, retry_in_ms: retryInMs }, "the same connect failure again; retrying");
        return undefined;
      }
      log.error(
        {
          url,
          error: reason,
          retry_in_ms: retryInMs,
          ...(same ? { retries_since_logged: same.retries } : {}),
        },
        (monitored
          ? "cannot read the scrape stream's last commit marker; retrying"
          : `cannot connect to the monitored system; ${tls ? tls.charAt(0).toLowerCase() + tls.slice(1, -1) : "check system.nats (url, system-account credentials)"}; retrying`) +
          " (logged again when the reason changes, and every 10 minutes while it lasts)",
      );
      failure = { text: waiting, at: Date.now(), retries: 0 };
      return undefined;
    }
  };
  /** Tries again until connected or stopped, waiting longer each time. */
  const retryConnect = async () => {
    for (let wait = CONNECT_RETRY_FIRST_MS; !stopped; wait = Math.min(wait * 2, CONNECT_RETRY_MAX_MS)) {
      await sleep(wait, undefined, { signal: retries.signal }).catch(() => undefined);
      if (stopped) break;
      const connected = await tryConnect(Math.min(wait * 2, CONNECT_RETRY_MAX_MS));
      if (connected) return connected;
    }
    return undefined;
  };
  /**
   * Connects, then starts the scraper. The first try is awaited (the node's start-up waits
   * for a system that answers); when it fails, the tries go on in the background, so a
   * system that cannot be reached, or that refuses the credentials, does not hold up the
   * node's other systems.
   */
  const start = async () => {
    const first = await tryConnect(CONNECT_RETRY_FIRST_MS);
    if (first) return run(first);
    retrying = retryConnect()
      .then((later) => (later ? run(later) : undefined))
      .catch((err: unknown) => log.error({ err }, "the scraper could not start"));
  };
  const run = async ({ monitored, previous }: Connected) => {
    if (stopped) {
      // Stopped while it connected (the node's start failed or was stopped): close it here.
      await monitored.drain().catch(() => undefined);
      return;
    }
    const accounts = serviceAccounts(options, log);
    const scraper = startScraper({
      ...(previous ? { expected: expectedSeed(previous), lastEpoch: previous.epoch } : {}),
      systemId: system.id,
      monitored,
      accounts,
      sink: confirming(
        scrapePublisher({
          sink: options.sink,
          systemId: system.id,
          externalSink: options.externalSink,
          ...(options.sinkFault ? { sinkFault: options.sinkFault } : {}),
          signal: retries.signal,
          log,
        }),
        options.confirmRole,
      ),
      config: system.scraper,
      log,
      onEpoch: (summary) => {
        for (const s of summary.sources) options.metrics.scrapeBytes(system.id, s.source, s.bytes);
      },
      ...(options.faults ? { faults: options.faults } : {}),
    });
    const disconnects = startDisconnectTracker({
      systemId: system.id,
      monitored,
      bucketMs: system.scraper.disconnectBucketMs,
      historyMs: system.scraper.disconnectHistoryMs,
      publish: (bucket) => publishDisconnectBucket(options.sink, bucket),
      log,
    });
    const accountWatch = guard.watchReconnects(monitored, (problem) => {
      falling = fallBack(monitored, problem);
    });
    running = { monitored, accounts, scraper, disconnects, accountWatch };
  };
  /**
   * A reconnect landed where the scrape cannot work (the user now in another account, say):
   * stop scraping through that connection, which would commit epochs of nothing but errors,
   * and connect again as at start-up until the check passes.
   */
  let falling: Promise<void> | undefined;
  const fallBack = async (monitored: NatsConnection, problem: string) => {
    const r = running;
    if (r?.monitored !== monitored || stopped) return;
    running = undefined;
    waiting = `cannot scrape: ${problem}`;
    await stopRunning(r);
    if (stopped) return;
    retrying = retryConnect()
      .then((later) => (later ? run(later) : undefined))
      .catch((err: unknown) => log.error({ err }, "the scraper could not start again"));
  };
  const stopRunning = async (r: Running) => {
    await r.accountWatch.stop();
    await r.scraper[Symbol.asyncDispose]();
    await r.disconnects[Symbol.asyncDispose]();
    await r.monitored.drain().catch(() => undefined);
    for (const a of r.accounts) await a.close();
  };

  let starting: Promise<void> | undefined;
  let stopping: Promise<void> | undefined;
  /** Stops whatever start() got to, once it got there. */
  const stop = async () => {
    stopped = true;
    retries.abort();
    await starting?.catch(() => undefined);
    await falling;
    await retrying;
    if (running) await stopRunning(running);
  };
  return {
    port: {
      status: () => scraperStatusOf(system.id, started().scraper),
      setPaused: (paused) => started().scraper.setPaused(paused),
      trigger: async () => {
        const { scraper } = started();
        await scraper.scrapeOnce();
        return scraperStatusOf(system.id, scraper);
      },
    },
    disconnectHistory: (since, limit) => started().disconnects.history(since, limit),
    askDiagnostic: (server, kind, body, waitMs) =>
      requestDiagnostic(started().monitored, server, kind, body, { ...system.scraper, waitMs }),
    sinkInfo: async () => {
      started();
      return scrapeStreamInfo(options.sink, system.id);
    },
    start: () => (starting ??= start()),
    problem: () => (running ? running.scraper.lastError : waiting),
    // Once only: a node whose start failed stops its scrape sides, some of them twice.
    [Symbol.asyncDispose]: () => (stopping ??= stop()),
  };
}

/**
 * The scrape stream, with the commit marker written only while this node still holds the
 * scrape role: a node stalled past its claim's lapse, whose role another node took, writes
 * no epoch beside that node's (the unmarked parts are never folded).
 */
function confirming(sink: ScrapeSink, confirmRole: (() => Promise<boolean>) | undefined): ScrapeSink {
  if (!confirmRole) return sink;
  return {
    publishReply: (epoch, reply) => sink.publishReply(epoch, reply),
    publishCommit: async (marker) => {
      if (!(await confirmRole())) {
        throw new Error("this node no longer holds the scrape role: the epoch is not committed");
      }
      return sink.publishCommit(marker);
    },
  };
}
