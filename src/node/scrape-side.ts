import type { NatsConnection } from "@nats-io/nats-core";
import type { AskDiagnostic, ScraperPort } from "../api/index.ts";
import {
  connectNats,
  EMBEDDED_ACCOUNT,
  lastCommitMarker,
  ScrapePublisher,
  type ConnectTarget,
} from "../bus/index.ts";
import type { SystemConfig } from "../config/index.ts";
import { publishDisconnectBucket } from "../feed/index.ts";
import type { Logger, NodeMetrics } from "../lib/index.ts";
import type { ScraperStatusReply } from "../protocol/index.ts";
import {
  requestDiagnostic,
  startDisconnectTracker,
  startScraper,
  type DisconnectTracker,
  type ScrapeFaults,
  type Scraper,
  type ServiceAccount,
} from "../scrape/index.ts";

export interface ScrapeSide extends AsyncDisposable {
  readonly scraper: Scraper;
  /** The scraper as its ops endpoints see it. */
  readonly port: ScraperPort;
  /** Client disconnect buckets (ops.disconnect.history, feed.disconnect). */
  readonly disconnects: DisconnectTracker;
  /** Asks one monitored server for a diagnostic (ops.diagnostics.*). */
  readonly askDiagnostic: AskDiagnostic;
}

function statusOf(systemId: string, scraper: Scraper): ScraperStatusReply {
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
            sources: last.sources.map((s) => ({ ...s, ms: Math.round(s.ms) })),
          },
        }
      : {}),
    ...(scraper.lastError ? { last_error: scraper.lastError } : {}),
  };
}

/**
 * ① The scrape side of one system: a connection to the monitored system's system account
 * (or the sink's own, when `nats` is not configured) and the scraper writing epochs to
 * the scrape stream on the sink.
 */
export async function startScrapeSide(options: {
  sink: NatsConnection;
  sinkSystem: ConnectTarget | undefined;
  system: SystemConfig;
  nodeId: string;
  metrics: NodeMetrics;
  log: Logger;
  faults?: ScrapeFaults;
}): Promise<ScrapeSide> {
  const { system, log } = options;
  const target = system.nats ?? options.sinkSystem;
  if (!target) {
    throw new Error(
      `system ${system.id}: set system.nats (url and system-account credentials) to say what to monitor; ` +
        "only the embedded sink can be monitored without it",
    );
  }
  const monitored = await connectNats(target, `natsmon ${options.nodeId} scrape ${system.id}`);
  const accounts = serviceAccounts(options, log);
  const previous = await lastCommitMarker(options.sink, system.id);
  const scraper = startScraper({
    ...(previous ? { expected: previous.servers_expected } : {}),
    systemId: system.id,
    monitored,
    accounts,
    sink: new ScrapePublisher(options.sink, system.id),
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
  return {
    scraper,
    disconnects,
    askDiagnostic: (server, kind, body, waitMs) =>
      requestDiagnostic(monitored, server, kind, body, { ...system.scraper, waitMs }),
    port: {
      status: () => statusOf(system.id, scraper),
      setPaused: (paused) => scraper.setPaused(paused),
      trigger: async () => {
        await scraper.scrapeOnce();
        return statusOf(system.id, scraper);
      },
    },
    async [Symbol.asyncDispose]() {
      await scraper[Symbol.asyncDispose]();
      await disconnects[Symbol.asyncDispose]();
      await monitored.drain().catch(() => undefined);
      for (const a of accounts) await a.close();
    },
  };
}

/**
 * The accounts whose micro services are gathered: those configured under `system.nats.accounts`,
 * each through its own connection, made on first use and retried each epoch until it
 * succeeds (bad credentials for one account must not stop the scrape); when the system is
 * the embedded sink itself, natsmon's own account on its sink connection, so its own
 * `monitor` service shows.
 */
function serviceAccounts(
  options: { sink: NatsConnection; system: SystemConfig; nodeId: string },
  log: Logger,
): (ServiceAccount & { close(): Promise<void> })[] {
  const { system } = options;
  if (!system.nats) {
    const nc = options.sink;
    return [{ name: EMBEDDED_ACCOUNT.monitor, connection: () => Promise.resolve(nc), close: async () => {} }];
  }
  const url = system.nats.url;
  return (system.nats.accounts ?? []).map((account) => {
    let connected: NatsConnection | undefined;
    return {
      name: account.name,
      async connection() {
        if (connected) return connected;
        const name = `natsmon ${options.nodeId} services ${system.id}/${account.name}`;
        connected = await connectNats({ ...account, url }, name);
        log.info({ account: account.name }, "connected to the account for service discovery");
        return connected;
      },
      async close() {
        await connected?.drain().catch(() => undefined);
      },
    };
  });
}
