/**
 * Epochs of a simulated system, as the scraper would gather them: a real nats-server, the
 * simulator answering `$SYS` on it, and the scraper's own gather of every source. Shared
 * by the benchmarks that fold or check simulated epochs.
 */
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { connect } from "@nats-io/transport-node";
import { natsServerConfig, startNatsServer } from "../src/bus/index.ts";
import type { EpochInput, ScrapeReply } from "../src/catalog/index.ts";
import { parseJsonExact, silentLogger } from "../src/lib/index.ts";
import type { CommitMarker } from "../src/protocol/index.ts";
import { fetchDetails, gather, SOURCES, type GatheredReply } from "../src/scrape/index.ts";
import { PROFILES, isProfileName, startSimulator } from "../src/simulate/index.ts";
import { DEFAULT_CHECKPOINT_BYTES, type DbConfig } from "../src/config/index.ts";

/** The catalog settings of the benchmarks: room to work, all cores, no retention. */
export const BENCH_DB: DbConfig = {
  retentionMs: 0,
  memoryLimit: "4GB",
  checkpointThresholdBytes: DEFAULT_CHECKPOINT_BYTES,
  threads: 0,
  queryMaxRows: 100_000,
  queryTimeoutMs: 30_000,
  queryStream: { maxRows: 1_000_000, window: 8, compression: "none", ackTimeoutMs: 5_000 },
  memoryProfile: { enabled: false, intervalMs: 2_000 },
};

/** The profiles named by BENCH_PROFILES (default medium,large). */
export function benchProfiles(): (keyof typeof PROFILES)[] {
  return (process.env.BENCH_PROFILES ?? "medium,large").split(",").filter(isProfileName);
}

export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

export interface SimulatedEpoch {
  readonly input: EpochInput;
  /** Bytes received for the epoch, as sent. */
  readonly bytes: number;
  readonly scrapeMs: number;
  /** Of scrapeMs and bytes: the accounts' details (ACCOUNTZ per account). */
  readonly detailsMs: number;
  readonly detailBytes: number;
}

/** `count` epochs of the profile, one minute apart from 2026-01-01, gathered in turn. */
export async function* simulatedEpochs(
  name: keyof typeof PROFILES,
  count: number,
  dir: string,
): AsyncGenerator<SimulatedEpoch> {
  const server = await startNatsServer({
    workDir: join(dir, "nats"),
    configText: natsServerConfig({
      serverName: "bench",
      host: "127.0.0.1",
      port: -1,
      workDir: join(dir, "nats"),
      maxPayload: 64 * 1024 * 1024,
    }),
  });
  const simNc = await connect({ servers: server.clientUrl });
  const sim = await startSimulator(simNc, PROFILES[name], silentLogger());
  const monitor = await connect({ servers: server.clientUrl });
  try {
    for (let e = 0; e < count; e++) {
      const t0 = performance.now();
      const gathered = await Promise.all(
        SOURCES.map(async (s) => ({
          s,
          r: await gather(monitor, s.subject, s.body, { quietMs: 1000, timeoutMs: 60_000 }),
        })),
      );
      // Then the accounts in detail, each of one server that lists it, as the scraper asks.
      const t1 = performance.now();
      const details = new Map<string, GatheredReply[]>();
      for (const { s, r } of gathered) {
        if (!s.details || r.kind !== "replies") continue;
        for (const [server, pages] of (await fetchDetails(monitor, s, r.replies, { timeoutMs: 60_000 }))
          .pages) {
          details.set(`${s.name}\u0000${server}`, pages);
        }
      }
      const detailsMs = performance.now() - t1;
      const scrapeMs = performance.now() - t0;
      const replies: ScrapeReply[] = [];
      let bytes = 0;
      let detailBytes = 0;
      const add = (source: string, reply: GatheredReply, page?: number) => {
        const text = (
          reply.encoding === "gzip" ? gunzipSync(reply.data) : Buffer.from(reply.data)
        ).toString();
        replies.push({ source, server: reply.server, body: parseJsonExact(text), ...(page ? { page } : {}) });
      };
      for (const { s, r } of gathered) {
        if (r.kind !== "replies") continue;
        for (const reply of r.replies) {
          bytes += reply.data.byteLength;
          add(s.name, reply);
          (details.get(`${s.name}\u0000${reply.server}`) ?? []).forEach((page, i) => {
            bytes += page.data.byteLength;
            detailBytes += page.data.byteLength;
            add(s.name, page, i + 2);
          });
        }
      }
      const epoch = new Date(Date.UTC(2026, 0, 1) + e * 60_000).toISOString();
      const servers = [...new Set(replies.map((r) => r.server))].sort();
      const marker: CommitMarker = {
        system_id: name,
        epoch,
        finished_at: epoch,
        parts: replies.map((r) => ({ source: r.source, server: r.server, seqs: [0], bytes: 0 })),
        servers_expected: servers,
        servers_answered: servers,
        unsupported: [],
        errors: [],
      };
      yield { input: { markerSeq: e + 1, marker, replies }, bytes, scrapeMs, detailsMs, detailBytes };
    }
  } finally {
    await sim[Symbol.asyncDispose]();
    await simNc.close();
    await monitor.close();
    await server.stop();
  }
}
