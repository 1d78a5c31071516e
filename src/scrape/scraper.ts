import type { NatsConnection } from "@nats-io/nats-core";
import type { Logger } from "../lib/index.ts";
import { formatEpoch } from "../domain/index.ts";
import type { CommitMarker, RawReply, ScrapePartRef } from "../protocol/index.ts";
import type { ScraperConfig } from "../config/index.ts";
import { gather } from "./gather.ts";
import { SOURCES, type Source } from "./sources.ts";

/** Where a scrape goes: the scrape stream (bus/ provides it). */
export interface ScrapeSink {
  publishReply(epoch: string, reply: RawReply): Promise<ScrapePartRef>;
  publishCommit(marker: CommitMarker): Promise<number>;
}

/** Points where a test may crash the process on purpose (crash-safety tests). */
export interface ScrapeFaults {
  beforeCommit?: () => void;
  afterCommit?: () => void;
  /** After an epoch is folded and before its marker is acked (catalog side). */
  afterFold?: () => void;
}

export interface EpochSummary {
  epoch: string;
  parts: number;
  bytes: number;
  serversAnswered: string[];
  commitSeq: number;
  ms: number;
}

export interface Scraper extends AsyncDisposable {
  /** Scrapes now (waits for a scrape already running, then runs one more). */
  scrapeOnce(): Promise<EpochSummary>;
  readonly lastEpoch: EpochSummary | undefined;
  readonly lastError: string | undefined;
}

export interface ScraperOptions {
  systemId: string;
  monitored: NatsConnection;
  sink: ScrapeSink;
  config: ScraperConfig;
  log: Logger;
  sources?: readonly Source[];
  faults?: ScrapeFaults;
  now?: () => Date;
}

/**
 * Runs one scrape at start and then one per interval. Each scrape is an epoch: every
 * source is gathered from every server, each reply is written to the sink, and a commit
 * marker closes the epoch. A failed scrape publishes no marker, so no partial epoch is
 * ever folded; the next tick tries again.
 */
export function startScraper(options: ScraperOptions): Scraper {
  const { systemId, monitored, sink, config, log } = options;
  const sources = options.sources ?? SOURCES;
  const now = options.now ?? (() => new Date());
  // Servers seen before, so one that stops answering shows as expected-but-missing.
  const known = new Set<string>();
  let running: Promise<EpochSummary> | undefined;
  let lastEpoch: EpochSummary | undefined;
  let lastError: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  async function scrape(): Promise<EpochSummary> {
    const started = now();
    const epoch = formatEpoch(started);
    const t0 = performance.now();
    const gathered = await Promise.all(
      sources.map(async (source) => ({
        source,
        result: await gather(monitored, source.subject, source.body, config),
      })),
    );
    const answered = new Set<string>();
    const unsupported: CommitMarker["unsupported"] = [];
    const errors: CommitMarker["errors"] = [];
    const publishing: Promise<ScrapePartRef>[] = [];
    for (const { source, result } of gathered) {
      if (result.kind === "unsupported") {
        unsupported.push({ source: source.name, servers: [...known] });
        continue;
      }
      for (const reply of result.replies) {
        answered.add(reply.server);
        if (reply.envelope.error) {
          errors.push({ source: source.name, error: `${reply.server}: ${reply.envelope.error.description}` });
        }
        // Published concurrently: JetStream acks pipeline far better than one at a time.
        publishing.push(
          sink.publishReply(epoch, {
            source: source.name,
            server: reply.server,
            data: reply.data,
            ...(reply.encoding ? { encoding: reply.encoding } : {}),
          }),
        );
      }
    }
    const parts = await Promise.all(publishing);
    for (const server of answered) known.add(server);
    options.faults?.beforeCommit?.();
    const marker: CommitMarker = {
      system_id: systemId,
      epoch,
      finished_at: formatEpoch(now()),
      parts,
      servers_expected: [...known].sort(),
      servers_answered: [...answered].sort(),
      unsupported,
      errors,
    };
    const commitSeq = await sink.publishCommit(marker);
    options.faults?.afterCommit?.();
    const summary: EpochSummary = {
      epoch,
      parts: parts.length,
      bytes: parts.reduce((sum, p) => sum + p.bytes, 0),
      serversAnswered: marker.servers_answered,
      commitSeq,
      ms: performance.now() - t0,
    };
    log.info(
      {
        epoch,
        parts: summary.parts,
        bytes: summary.bytes,
        servers: answered.size,
        ms: Math.round(summary.ms),
      },
      "scrape committed",
    );
    return summary;
  }

  function scrapeOnce(): Promise<EpochSummary> {
    const previous = running ?? Promise.resolve(undefined);
    const next = previous
      .catch(() => undefined)
      .then(scrape)
      .then(
        (summary) => {
          lastEpoch = summary;
          lastError = undefined;
          return summary;
        },
        (err: unknown) => {
          lastError = err instanceof Error ? err.message : String(err);
          throw err;
        },
      );
    running = next;
    return next;
  }

  function schedule(delayMs: number): void {
    if (stopped) return;
    timer = setTimeout(() => {
      const tickStarted = Date.now();
      scrapeOnce()
        .catch((err: unknown) => log.error({ err }, "scrape failed; retrying next interval"))
        .finally(() => schedule(Math.max(0, config.intervalMs - (Date.now() - tickStarted))));
    }, delayMs);
  }
  schedule(0);

  return {
    scrapeOnce,
    get lastEpoch() {
      return lastEpoch;
    },
    get lastError() {
      return lastError;
    },
    async [Symbol.asyncDispose]() {
      stopped = true;
      clearTimeout(timer);
      await running?.catch(() => undefined);
    },
  };
}
