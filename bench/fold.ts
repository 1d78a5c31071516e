/**
 * npm run bench:fold — what folding costs once a catalog holds a history, DuckDB's checkpoints
 * included, under several db.checkpoint-threshold values. For each profile: simulated epochs
 * gathered from a real nats-server are folded into a real DuckDB file, its per-epoch tables
 * grown to BENCH_FOLD_HISTORY epochs (check-history.ts, default 2,880: one day of 30 s
 * epochs), and the file closed. Then, for each threshold, a copy of that file is opened as a
 * node opens its catalog and the same BENCH_FOLD_EPOCHS further epochs (default 24) folded in
 * turn, each commit checkpointing when the log reaches the threshold. Prints the first fold
 * (a catalog just opened reads what it had not cached), then the others' mean, median and
 * longest time and those over 500 ms; the checkpoints the folds made, the largest log and
 * DuckDB's largest memory; and the time to open a copy taken after the last fold, with the log
 * not yet checkpointed then (what a node killed then replays). Asserts nothing.
 *   BENCH_PROFILES=medium BENCH_FOLD_HISTORY=20160 npm run bench:fold
 *   BENCH_CHECKPOINT_THRESHOLDS=16MiB,128MiB,256MiB BENCH_FOLD_EPOCHS=48 npm run bench:fold
 */
import { copyFile, mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  catalogMemory,
  catalogStorage,
  foldEpoch,
  openCatalog,
  type Catalog,
  type EpochInput,
} from "../src/catalog/index.ts";
import { DEFAULT_CHECKPOINT_BYTES } from "../src/config/index.ts";
import { parseByteSize } from "../src/config/stream-size.ts";
import type { PROFILES } from "../src/simulate/index.ts";
import { growHistory } from "./check-history.ts";
import { BENCH_DB, median, simulatedEpochs } from "./simulated-epochs.ts";

const PROFILE_NAMES = (process.env.BENCH_PROFILES ?? "medium").split(",") as (keyof typeof PROFILES)[];
const HISTORY = Number(process.env.BENCH_FOLD_HISTORY ?? 2880);
const EPOCHS = Number(process.env.BENCH_FOLD_EPOCHS ?? 24);
const THRESHOLDS = (process.env.BENCH_CHECKPOINT_THRESHOLDS ?? `16MiB,${DEFAULT_CHECKPOINT_BYTES}B,256MiB`)
  .split(",")
  .map((text) => {
    const parsed = parseByteSize(text.trim(), false);
    if ("problem" in parsed) throw new Error(`BENCH_CHECKPOINT_THRESHOLDS: ${parsed.problem}`);
    return parsed.bytes;
  });
/** The epochs made before the history is grown: the delta folds have something to compare with. */
const FIRST = 6;
const SLOW_MS = 500;

const mib = (bytes: number) => `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
const fmt = (ms: number) => `${Math.round(ms).toLocaleString("en-US")} ms`;

interface Run {
  readonly threshold: number;
  readonly folds: number[];
  readonly checkpoints: number;
  readonly walPeak: number;
  readonly memoryPeak: number;
  readonly replay: { walBytes: number; ms: number };
}

async function walBytes(path: string): Promise<number> {
  return stat(`${path}.wal`).then(
    (s) => s.size,
    () => 0,
  );
}

async function duckdbMemory(catalog: Catalog): Promise<number> {
  return (await catalogMemory(catalog)).reduce((sum, c) => sum + c.memoryBytes, 0);
}

/** Opens a copy of the catalog as it is on disk now (file and log), and times the open. */
async function replayCopy(path: string, dir: string): Promise<{ walBytes: number; ms: number }> {
  const copy = join(dir, "replay.duckdb");
  await copyFile(path, copy);
  const wal = await walBytes(path);
  if (wal > 0) await copyFile(`${path}.wal`, `${copy}.wal`);
  const t0 = performance.now();
  const opened = await openCatalog({ path: copy, db: BENCH_DB });
  const ms = performance.now() - t0;
  await opened[Symbol.asyncDispose]();
  await rm(copy, { force: true });
  await rm(`${copy}.wal`, { force: true });
  return { walBytes: wal, ms };
}

async function foldOnCopy(base: string, dir: string, threshold: number, inputs: EpochInput[]): Promise<Run> {
  const path = join(dir, `at-${threshold}.duckdb`);
  await copyFile(base, path);
  const catalog = await openCatalog({ path, db: { ...BENCH_DB, checkpointThresholdBytes: threshold } });
  const folds: number[] = [];
  let checkpoints = 0;
  let walPeak = 0;
  let memoryPeak = 0;
  let replay = { walBytes: 0, ms: 0 };
  try {
    let wal = (await catalogStorage(catalog)).walBytes;
    for (const input of inputs) {
      const t0 = performance.now();
      const result = await foldEpoch(catalog, input);
      folds.push(performance.now() - t0);
      if (result.status !== "folded") throw new Error(`epoch ${input.marker.epoch} was not folded`);
      const now = await walBytes(path);
      if (now < wal) checkpoints++;
      wal = now;
      memoryPeak = Math.max(memoryPeak, await duckdbMemory(catalog));
      walPeak = Math.max(walPeak, now);
    }
    // Between folds nothing writes the file, so a copy of it and its log is what a node
    // killed after the last fold leaves behind.
    replay = await replayCopy(path, dir);
  } finally {
    await catalog[Symbol.asyncDispose]();
    await rm(path, { force: true });
    await rm(`${path}.wal`, { force: true });
  }
  return { threshold, folds, checkpoints, walPeak, memoryPeak, replay };
}

async function benchProfile(name: keyof typeof PROFILES): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), `natsmon-bench-fold-${name}-`));
  try {
    const base = join(dir, `${name}.duckdb`);
    const catalog = await openCatalog({ path: base, db: BENCH_DB });
    const folded: string[] = [];
    const inputs: EpochInput[] = [];
    const t0 = performance.now();
    for await (const epoch of simulatedEpochs(name, FIRST + EPOCHS, dir)) {
      if (folded.length < FIRST) {
        await foldEpoch(catalog, epoch.input);
        folded.push(epoch.input.marker.epoch);
      } else inputs.push(epoch.input);
    }
    const held = await growHistory(catalog, folded, HISTORY);
    const file = (await stat(base)).size;
    await catalog[Symbol.asyncDispose]();
    console.log(
      `\n${name}: ${held.toLocaleString("en-US")} epochs of history (${(file / 1e9).toFixed(1)} GB) ` +
        `made in ${((performance.now() - t0) / 1000).toFixed(0)} s; folding ${inputs.length} more epochs on a copy for each threshold`,
    );
    console.log(
      `  ${"threshold".padEnd(12)}${"first".padStart(10)}${"mean".padStart(10)}${"median".padStart(10)}${"longest".padStart(11)}` +
        `${`over ${SLOW_MS} ms`.padStart(14)}${"checkpoints".padStart(13)}${"largest log".padStart(14)}` +
        `${"DuckDB memory".padStart(15)}   open after the last fold`,
    );
    for (const threshold of THRESHOLDS) {
      const run = await foldOnCopy(base, dir, threshold, inputs);
      const [first = 0, ...rest] = run.folds;
      const mean = rest.reduce((a, b) => a + b, 0) / rest.length;
      console.log(
        `  ${mib(run.threshold).padEnd(12)}${fmt(first).padStart(10)}${fmt(mean).padStart(10)}` +
          `${fmt(median(rest)).padStart(10)}${fmt(Math.max(...rest)).padStart(11)}` +
          `${`${rest.filter((ms) => ms > SLOW_MS).length} of ${rest.length}`.padStart(14)}` +
          `${String(run.checkpoints).padStart(13)}${mib(run.walPeak).padStart(14)}${mib(run.memoryPeak).padStart(15)}` +
          `   ${fmt(run.replay.ms)} (${mib(run.replay.walBytes)} of log)`,
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

console.log(
  `bench:fold — ${EPOCHS} epochs folded after ${HISTORY.toLocaleString("en-US")} of history, ` +
    `checkpoint thresholds ${THRESHOLDS.map(mib).join(", ")} (profiles: ${PROFILE_NAMES.join(", ")})`,
);
for (const name of PROFILE_NAMES) await benchProfile(name);
