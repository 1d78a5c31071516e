/**
 * npm run bench:metrics — the monitored system's figures at GET /metrics (node.metrics-nats),
 * measured on this machine. For each profile: simulated epochs gathered from a real
 * nats-server and folded into a real DuckDB file, then, for the scopes all and servers, the
 * figures read from the latest epoch as the node reads them (natsFiguresReader) and rendered
 * (renderFamilies), then gzip-compressed as GET /metrics compresses them for a scrape that
 * asks for it (MetricsGzip), three times each. Prints the samples and text size, the median
 * read, render and compression times, the compressed size, and the longest the event loop
 * was held at once (what the node's other work waits). Asserts nothing.
 *   BENCH_PROFILES=medium,large npm run bench:metrics
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { foldEpoch, natsFiguresReader, openCatalog } from "../src/catalog/index.ts";
import { renderFamilies, silentLogger } from "../src/lib/index.ts";
import { MetricsGzip } from "../src/node/metrics-gzip.ts";
import type { PROFILES } from "../src/simulate/index.ts";
import { BENCH_DB, benchProfiles, median, simulatedEpochs } from "./simulated-epochs.ts";

const RUNS = 3;

/** Runs `work`, watching the event loop every millisecond: its time and the longest block. */
async function watched<T>(work: () => Promise<T>): Promise<{ value: T; ms: number; blockMs: number }> {
  let blockMs = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    blockMs = Math.max(blockMs, now - last);
    last = now;
  }, 1);
  const t0 = performance.now();
  const value = await work();
  const ms = performance.now() - t0;
  blockMs = Math.max(blockMs, performance.now() - last);
  clearInterval(timer);
  return { value, ms, blockMs };
}

async function benchProfile(name: keyof typeof PROFILES) {
  const dir = await mkdtemp(join(tmpdir(), `natsmon-bench-metrics-${name}-`));
  const catalog = await openCatalog({ path: join(dir, `${name}.duckdb`), db: BENCH_DB });
  try {
    for await (const epoch of simulatedEpochs(name, 2, dir)) await foldEpoch(catalog, epoch.input);
    for (const scope of ["all", "servers"] as const) {
      const reads: number[] = [];
      const renders: number[] = [];
      const gzips: number[] = [];
      let gzipBytes = 0;
      let block = 0;
      let samples = 0;
      let bytes = 0;
      for (let i = 0; i < RUNS; i++) {
        // A new reader each run: the first read after an epoch, as each epoch's first scrape has it.
        const read = natsFiguresReader(name, scope, () => catalog, silentLogger());
        const figures = await watched(async () => (await (await read())?.families()) ?? []);
        const families = figures.value;
        const text = await watched(() => renderFamilies(families));
        reads.push(figures.ms);
        renders.push(text.ms);
        block = Math.max(block, figures.blockMs, text.blockMs);
        samples = families.reduce((n, f) => n + f.samples.length, 0);
        bytes = Buffer.byteLength(text.value);
        // As GET /metrics compresses the figures for a scrape that asks for gzip: once an epoch.
        const figuresOnly = { own: "", figures: { key: "k", parts: [text.value] }, contentType: "" };
        const gzip = await watched(() => new MetricsGzip().body(figuresOnly));
        gzips.push(gzip.ms);
        block = Math.max(block, gzip.blockMs);
        gzipBytes = gzip.value.reduce((n, part) => n + part.byteLength, 0);
      }
      console.log(
        `${name.padEnd(7)} ${scope.padEnd(8)} ${samples.toLocaleString("en-US").padStart(9)} samples ` +
          `${(bytes / 1e6).toFixed(1).padStart(6)} MB   read ${median(reads).toFixed(0).padStart(5)} ms ` +
          `  render ${median(renders).toFixed(0).padStart(5)} ms   gzip ${median(gzips).toFixed(0).padStart(5)} ms ` +
          `to ${(gzipBytes / 1e6).toFixed(1).padStart(5)} MB   longest block ${block.toFixed(0).padStart(4)} ms`,
      );
    }
  } finally {
    await catalog[Symbol.asyncDispose]();
    await rm(dir, { recursive: true, force: true });
  }
}

for (const profile of benchProfiles()) await benchProfile(profile);
