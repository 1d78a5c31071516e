import type { NatsConnection } from "@nats-io/nats-core";
import type { Logger } from "../lib/index.ts";
import { formatEpoch } from "../domain/index.ts";
import type { CommitMarker, RawReply, ScraperSourceStatus, ScrapePartRef } from "../protocol/index.ts";
import type { ScraperConfig } from "../config/index.ts";
import { EpochClock, logClockEvent } from "./epoch-clock.ts";
import { ExpectedServers, metaGroupViews, type ExpectedSeed } from "./expected-servers.ts";
import { gather, type GatheredReply } from "./gather.ts";
import { fetchDetails, fetchRemainingPages } from "./pages.ts";
import { gatherServices, SERVICES_SOURCE, type ServiceAccount } from "./services.ts";
import { SOURCES, type Source } from "./sources.ts";
import {
  AskAgainTargets,
  askMissingAgain,
  respondersOf,
  type AskedAgain,
  type Responder,
} from "./ask-again.ts";
import { missingReplies, noResponders, serversTooOld, serversInReplies, systemMembers } from "./coverage.ts";
import { ownConnections } from "./own-connection.ts";

/** Where a scrape goes: the scrape stream (bus/ provides it). */
export interface ScrapeSink {
  publishReply(epoch: string, reply: RawReply): Promise<ScrapePartRef>;
  publishCommit(marker: CommitMarker): Promise<number>;
}

/** Points where a test may crash the process on purpose (crash-safety tests). */
export interface ScrapeFaults {
  beforeCommit?: () => void;
  afterCommit?: () => void;
  /** After a commit marker is delivered and before its parts are read (catalog side). */
  beforeReadParts?: () => Promise<void> | void;
  /** After an epoch is folded and before its marker is acked (catalog side). */
  afterFold?: () => void;
  /** After the findings baseline of an epoch with transitions is saved, before they are published (catalog side). */
  afterBaselineSave?: () => void;
}

/** How one source went in the last epoch (reported as is by ops.scraper.status). */
export type SourceSummary = ScraperSourceStatus;

export interface EpochSummary {
  epoch: string;
  parts: number;
  bytes: number;
  serversAnswered: string[];
  /** Answered some requests of the epoch but not all: their findings are kept as they were. */
  serversPartial: string[];
  serversExpected: string[];
  /** Expected servers that did not answer, and since when (counted toward scraper.forget-after). */
  serversUnheardSince: Record<string, string>;
  /** Servers missing from a source's broadcast replies that answered when asked again directly. */
  askedAgain: AskedAgain[];
  commitSeq: number;
  ms: number;
  sources: SourceSummary[];
}

export const ScraperState = { Running: "running", Paused: "paused" } as const;
export type ScraperState = (typeof ScraperState)[keyof typeof ScraperState];

export interface Scraper extends AsyncDisposable {
  /** Scrapes now, also while paused (waits for a scrape already running, then runs one). */
  scrapeOnce(): Promise<EpochSummary>;
  /** Stops or restarts the interval; an on-demand scrape still works while paused. */
  setPaused(paused: boolean): void;
  readonly state: ScraperState;
  readonly intervalMs: number;
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
  /** Application accounts whose micro services are gathered (services.ts). */
  accounts?: readonly ServiceAccount[];
  /** Servers expected from before this process started (the last commit marker). */
  expected?: ExpectedSeed;
  faults?: ScrapeFaults;
  /** The last epoch committed before this process (the last commit marker's): epochs are named after it. */
  lastEpoch?: string;
  now?: () => Date;
  /** A clock that never steps (default performance.now), to tell a step of `now` from time passing. */
  monotonicMs?: () => number;
  /** Told of each committed epoch (metrics). */
  onEpoch?: (summary: EpochSummary) => void;
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
  const known = new ExpectedServers(config.forgetAfterMs, log, options.expected);
  const last = options.lastEpoch === undefined ? undefined : new Date(options.lastEpoch);
  const clock = new EpochClock(now, options.monotonicMs ?? (() => performance.now()), last);
  // Each server's id as last seen, to ask one directly that the broadcasts missed.
  let responders = new Map<string, Responder>();
  const askTargets = new AskAgainTargets();
  let running: Promise<EpochSummary> | undefined;
  let lastEpoch: EpochSummary | undefined;
  let lastError: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let paused = false;
  let stopped = false;

  async function scrape(): Promise<EpochSummary> {
    // Named after the last epoch even when the wall clock stepped back (see epoch-clock.ts).
    const epoch = formatEpoch(logClockEvent(log, clock.next()).epoch);
    const t0 = performance.now();
    const servicesGathered = Promise.all((options.accounts ?? []).map((a) => gatherServices(a, config)));
    const gathered = await Promise.all(
      sources.map(async (source) => ({
        source,
        result: await gather(monitored, source.subject, source.body, config),
      })),
    );
    // A server expected (heard this epoch, or before and not forgotten) that a broadcast's
    // replies lack is asked again directly, within the epoch's scraper.timeout, before it
    // counts as partial: its reply may have come later than scraper.quiet.
    responders = respondersOf(gathered, responders);
    const members = systemMembers(gathered, new Set());
    const askedAgain =
      members.size === 0
        ? []
        : await askMissingAgain(
            monitored,
            gathered,
            askTargets.targets(known.servers, members, new Set(serversInReplies(gathered))),
            responders,
            { deadlineMs: t0 + config.timeoutMs, quietMs: config.quietMs },
            log,
          );
    const answered = new Set(serversInReplies(gathered));
    const versions = new Map<string, string>();
    for (const { result } of gathered) {
      if (result.kind !== "replies") continue;
      for (const reply of result.replies)
        if (reply.envelope.server?.ver) versions.set(reply.server, reply.envelope.server.ver);
    }
    const unsupported: CommitMarker["unsupported"] = [];
    const errors: CommitMarker["errors"] = [];
    const summaries: SourceSummary[] = [];
    const publishing: Promise<ScrapePartRef>[] = [];
    // Awaited together once all is gathered: one refused before then must not end the process.
    const track = (part: Promise<ScrapePartRef>) => publishing.push(part) && void part.catch(() => undefined);
    const publish = (source: Source, reply: GatheredReply, page?: number) =>
      track(
        sink.publishReply(epoch, {
          source: source.name,
          server: reply.server,
          ...(page ? { page } : {}),
          data: reply.data,
          ...(reply.encoding ? { encoding: reply.encoding } : {}),
        }),
      );
    const partial = new Set<string>();
    const answeredAll = systemMembers(gathered, answered);
    askTargets.epochEnded(answered, answeredAll);
    for (const { source, result } of gathered) {
      const tooOld = serversTooOld(source, result, answered, versions);
      if (tooOld.length > 0) unsupported.push({ source: source.name, servers: tooOld });
      const missing = missingReplies(result, result.kind === "replies" ? answeredAll : answered, tooOld);
      for (const server of missing) partial.add(server);
      if (missing.length > 0 && result.kind === "replies") {
        errors.push({
          source: source.name,
          error:
            `no reply from ${missing.join(", ")}, which answered other requests (later than scraper.quiet, ` +
            "or past scraper.timeout): its findings are kept as they were",
        });
      }
      if (result.kind === "unsupported") {
        if (missing.length > 0) errors.push({ source: source.name, error: noResponders(source, missing) });
        summaries.push({
          source: source.name,
          servers: 0,
          bytes: 0,
          ms: result.ms,
          duplicates: 0,
          unsupported: tooOld.length > 0,
        });
        continue;
      }
      let bytes = 0;
      // The servers' further pages are asked for side by side.
      const further = await Promise.all(
        result.replies.map((reply) =>
          source.paged ? fetchRemainingPages(monitored, source, reply, config) : Promise.resolve(undefined),
        ),
      );
      // A list's items in detail, each of one server that lists it: the pages after its list.
      if (source.details) {
        const details = await fetchDetails(monitored, source, result.replies, config);
        for (const error of details.errors) errors.push({ source: source.name, error });
        result.replies.forEach((reply, r) => {
          const pages = details.pages.get(reply.server);
          if (pages) further[r] = { pages };
        });
      }
      for (const [r, reply] of result.replies.entries()) {
        bytes += reply.data.byteLength;
        if (reply.envelope.error) {
          errors.push({ source: source.name, error: `${reply.server}: ${reply.envelope.error.description}` });
        }
        const more = further[r];
        if (!more) {
          publish(source, reply);
          continue;
        }
        if (more.error) errors.push({ source: source.name, error: more.error });
        [reply, ...more.pages].forEach((page, i) => {
          if (i > 0) bytes += page.data.byteLength;
          publish(source, page, i + 1);
        });
      }
      summaries.push({
        source: source.name,
        servers: result.replies.length,
        bytes,
        ms: result.ms,
        duplicates: result.duplicates,
        unsupported: result.replies.length === 0 && tooOld.length > 0,
      });
    }
    if (options.accounts?.length) {
      const accounts = await servicesGathered;
      for (const a of accounts) {
        if (a.error) errors.push({ source: SERVICES_SOURCE, error: a.error });
        else track(sink.publishReply(epoch, { source: SERVICES_SOURCE, server: a.account, data: a.data }));
      }
      summaries.push({
        source: SERVICES_SOURCE,
        servers: accounts.reduce((n, a) => n + a.instances, 0),
        bytes: accounts.reduce((n, a) => n + a.bytes, 0),
        ms: Math.max(0, ...accounts.map((a) => a.ms)),
        duplicates: accounts.reduce((n, a) => n + a.duplicates, 0),
        unsupported: false,
      });
    }
    const parts = await Promise.all(publishing);
    // The JetStream meta group names every peer, also one that is down now: a server that
    // has been down since before natsmon started is expected too, not just unknown.
    const jsz = gathered.flatMap(({ source, result }) =>
      source.name === "jsz" && result.kind === "replies" ? result.replies : [],
    );
    const expected = known.observe(Date.parse(epoch), answered, metaGroupViews(jsz));
    for (const server of responders.keys())
      if (!expected.expected.includes(server)) responders.delete(server);
    if (answered.size === 0) {
      errors.push({
        source: "*",
        error:
          `no monitored server answered through ${monitored.getServer()}: is the connection in the system ` +
          "account, and is that server answering? (a server that stops answering pings is left for another)",
      });
    }
    options.faults?.beforeCommit?.();
    const marker: CommitMarker = {
      system_id: systemId,
      epoch,
      finished_at: formatEpoch(now()),
      parts,
      servers_expected: expected.expected,
      servers_answered: [...answered].sort(),
      ...(Object.keys(expected.unheardSince).length > 0
        ? { servers_unheard_since: expected.unheardSince }
        : {}),
      ...(Object.keys(expected.metaPeers).length > 0 ? { meta_peers: expected.metaPeers } : {}),
      ...(partial.size > 0 ? { servers_partial: [...partial].sort() } : {}),
      ...(askedAgain.length > 0 ? { asked_again: askedAgain } : {}),
      scrape_interval_ns: config.intervalMs * 1_000_000,
      own_connections: ownConnections(monitored, await servicesGathered),
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
      serversPartial: marker.servers_partial ?? [],
      serversExpected: marker.servers_expected,
      serversUnheardSince: expected.unheardSince,
      askedAgain,
      commitSeq,
      ms: performance.now() - t0,
      sources: summaries,
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
    const next = (running ?? Promise.resolve(undefined))
      .catch(() => undefined)
      .then(scrape)
      .then(
        (summary) => {
          lastEpoch = summary;
          lastError = undefined;
          options.onEpoch?.(summary);
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
    clearTimeout(timer);
    if (stopped || paused) return;
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
    setPaused(value) {
      if (value === paused) return;
      paused = value;
      log.info({ paused }, paused ? "scraper paused" : "scraper resumed");
      // Resuming scrapes at once; the interval then runs from there.
      schedule(0);
    },
    get state() {
      return paused ? ScraperState.Paused : ScraperState.Running;
    },
    intervalMs: config.intervalMs,
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
