/** Test input: one epoch scraped by the real scraper from real servers, kept in memory. */
import { gunzipSync } from "node:zlib";
import type { NatsConnection } from "@nats-io/nats-core";
import type { ScrapeReply } from "../../../src/catalog/index.ts";
import { parseJsonExact, silentLogger } from "../../../src/lib/index.ts";
import type { CommitMarker, RawReply, ScrapePartRef } from "../../../src/protocol/index.ts";
import {
  startScraper,
  type EpochSummary,
  type ExpectedSeed,
  type ServiceAccount,
  type Source,
} from "../../../src/scrape/index.ts";

/** One epoch as the scraper writes it, kept in memory instead of the scrape stream. */
export async function scrapeOneEpoch(
  monitored: NatsConnection,
  sources: readonly Source[],
  options: { expected?: ExpectedSeed; forgetAfterMs?: number; accounts?: readonly ServiceAccount[] } = {},
): Promise<{ marker: CommitMarker; replies: ScrapeReply[]; summary: EpochSummary }> {
  const replies: ScrapeReply[] = [];
  let committed: (marker: CommitMarker) => void = () => {};
  const done = new Promise<CommitMarker>((resolve) => (committed = resolve));
  let summarized: (summary: EpochSummary) => void = () => {};
  const summary = new Promise<EpochSummary>((resolve) => (summarized = resolve));
  const sink = {
    publishReply(_epoch: string, reply: RawReply): Promise<ScrapePartRef> {
      const data = reply.encoding === "gzip" ? gunzipSync(reply.data) : reply.data;
      const page = reply.page ? { page: reply.page } : {};
      replies.push({
        source: reply.source,
        server: reply.server,
        ...page,
        body: parseJsonExact(data.toString()),
      });
      return Promise.resolve({
        ...page,
        source: reply.source,
        server: reply.server,
        seqs: [replies.length],
        bytes: 1,
      });
    },
    publishCommit(marker: CommitMarker): Promise<number> {
      committed(marker);
      return Promise.resolve(replies.length + 1);
    },
  };
  await using _scraper = startScraper({
    systemId: "live",
    monitored,
    sink,
    config: {
      intervalMs: 3_600_000,
      quietMs: 300,
      timeoutMs: 5000,
      disconnectBucketMs: 60_000,
      disconnectHistoryMs: 3_600_000,
      forgetAfterMs: options.forgetAfterMs ?? 0,
      stream: { maxAgeMs: 6 * 3_600_000, maxBytes: -1 },
    },
    log: silentLogger(),
    sources,
    ...(options.expected ? { expected: options.expected } : {}),
    ...(options.accounts ? { accounts: options.accounts } : {}),
    onEpoch: summarized,
  });
  return { marker: await done, replies, summary: await summary };
}
