/**
 * npm run bench:checks — every check over simulated epochs, measured on this machine. For
 * each profile: simulated epochs gathered from a real nats-server, folded into a real DuckDB
 * file with the check macros installed, and after each fold all operational checks run over
 * the new epoch exactly as the catalog side runs them (runEpochChecks). Once every epoch is
 * folded, each optimization check runs three times over the window of all of them, as
 * checks.findings runs it (findingsRowsSql). Prints each check's median time, all checks
 * together, and the five slowest. With BENCH_CHECK_HISTORY=N, the per-epoch tables are then
 * grown to N epochs (check-history.ts), the catalog opened again as a restarted node opens
 * it, and one more epoch is folded and its operational checks run: what folding and checking
 * an epoch cost once a node holds its retention. Then
 * each view is read at the latest epoch, named by a subquery and by a parameter, and each
 * entity context macro run over its default hour, ending at the latest epoch and at `ep_to`
 * given. Asserts nothing.
 *   BENCH_PROFILES=medium,large BENCH_CHECK_EPOCHS=6 npm run bench:checks
 *   BENCH_PROFILES=small BENCH_CHECK_HISTORY=92160 npm run bench:checks
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { foldEpoch, installCheckMacros, openCatalog, runEpochChecks } from "../src/catalog/index.ts";
import type { SimulatedEpoch } from "./simulated-epochs.ts";
import { CHECKS, epochCheckStatements, findingsRowsSql, installStatements } from "../src/checks/index.ts";
import type { PROFILES } from "../src/simulate/index.ts";
import { BENCH_DB, benchProfiles, median, simulatedEpochs } from "./simulated-epochs.ts";
import {
  checkAgain,
  contextTimings,
  growHistory,
  viewTimings,
  type ContextTiming,
  type ViewTiming,
} from "./check-history.ts";

/** Epochs per profile; the first ones give the delta and history checks something to compare with. */
const profiles = benchProfiles();
const EPOCHS = Number(process.env.BENCH_CHECK_EPOCHS ?? 6);
/** Epochs of history to check the last epoch again with; 0: not measured. */
const HISTORY = Number(process.env.BENCH_CHECK_HISTORY ?? 0);
const fmt = (ms: number) => ms.toFixed(1).padStart(8);
const OPERATIONAL = CHECKS.filter((c) => !c.optimization);
const OPTIMIZATION = CHECKS.filter((c) => c.optimization);
const SETTINGS = { disabledChecks: [], checkThresholds: {} };

async function benchProfile(name: keyof typeof PROFILES) {
  const dir = await mkdtemp(join(tmpdir(), `natsmon-bench-checks-${name}-`));
  const path = join(dir, `${name}.duckdb`);
  let catalog = await openCatalog({ path, db: BENCH_DB });
  const statements = epochCheckStatements(SETTINGS);
  const perCheck = new Map<string, number[]>(OPERATIONAL.map((c) => [c.code, []]));
  const windowed: { code: string; ms: number; rows: number }[] = [];
  const epochs: string[] = [];
  const totals: number[] = [];
  const findings: number[] = [];
  const failed = new Set<string>();
  let statsRows = 0;
  const foldMs: number[] = [];
  let history:
    | {
        epochs: number;
        foldMs: number;
        total: number;
        byCheck: { code: string; ms: number }[];
        views: ViewTiming[];
        contexts: ContextTiming[];
      }
    | undefined;
  try {
    await installCheckMacros(catalog, installStatements());
    let extra: SimulatedEpoch | undefined;
    for await (const epoch of simulatedEpochs(name, EPOCHS + (HISTORY > 0 ? 1 : 0), dir)) {
      // The last one is folded once the history is there.
      if (epochs.length === EPOCHS) {
        extra = epoch;
        continue;
      }
      const f0 = performance.now();
      const folded = await foldEpoch(catalog, epoch.input);
      foldMs.push(performance.now() - f0);
      epochs.push(epoch.input.marker.epoch);
      if (folded.status === "folded") statsRows = folded.rows;
      const result = await runEpochChecks(catalog, epoch.input.marker.epoch, statements);
      if (!result) throw new Error(`epoch ${epoch.input.marker.epoch} is not in the catalog`);
      totals.push(result.ms);
      findings.push(result.findings.length);
      for (const t of result.timings) perCheck.get(t.code)?.push(t.ms);
      for (const f of result.failed) {
        if (!failed.has(f.code)) console.log(`  ${f.code} FAILED: ${f.error}`);
        failed.add(f.code);
      }
      process.stdout.write(
        `  ${name}: epoch ${totals.length}/${EPOCHS} checked in ${result.ms.toFixed(0)} ms\n`,
      );
    }
    for (const check of OPTIMIZATION) {
      const sql = findingsRowsSql(check, SETTINGS);
      const runs: number[] = [];
      let rows = 0;
      for (let i = 0; i < 3; i++) {
        const t0 = performance.now();
        rows = await catalog.withReader(
          async (con) => (await con.runAndReadAll(sql, [epochs[0]!, epochs.at(-1)!])).currentRowCount,
        );
        runs.push(performance.now() - t0);
      }
      windowed.push({ code: check.code, ms: median(runs), rows });
    }
    if (HISTORY > 0) {
      const t0 = performance.now();
      const held = await growHistory(catalog, epochs, HISTORY);
      console.log(
        `  ${name}: ${held} epochs of history made in ${((performance.now() - t0) / 1000).toFixed(0)} s`,
      );
      // Opened again, as a node restarted on this catalog opens it: the process that copied the
      // history holds DuckDB's buffers full of the rows it wrote, and the checks ran slower
      // there than any node runs them (medium, one week: 1,076 ms an epoch there, 648 ms opened
      // again, against 580 ms with 6 epochs).
      await catalog[Symbol.asyncDispose]();
      catalog = await openCatalog({ path, db: BENCH_DB });
      // A new epoch on top of it, folded and checked as the catalog side does, then checked again.
      const f0 = performance.now();
      const folded = await foldEpoch(catalog, extra!.input);
      const extraFoldMs = performance.now() - f0;
      if (folded.status !== "folded") throw new Error(`the epoch after the history was not folded`);
      const first = await runEpochChecks(catalog, extra!.input.marker.epoch, statements);
      const again = [first!, ...(await checkAgain(catalog, extra!.input.marker.epoch, statements, 4))];
      const byCode = new Map<string, number[]>();
      for (const r of again)
        for (const t of r.timings) byCode.set(t.code, [...(byCode.get(t.code) ?? []), t.ms]);
      history = {
        epochs: held + 1,
        foldMs: extraFoldMs,
        total: median(again.map((r) => r.ms)),
        byCheck: [...byCode].map(([code, ms]) => ({ code, ms: median(ms) })),
        views: await viewTimings(catalog),
        contexts: await contextTimings(catalog),
      };
    }
  } finally {
    await catalog[Symbol.asyncDispose]();
    await rm(dir, { recursive: true, force: true });
  }
  // The first epoch has no previous one: delta checks return early, so it is left out.
  const measured = totals.slice(1);
  const byCheck = [...perCheck].map(([code, ms]) => ({ code, ms: median(ms.slice(1)) }));
  return {
    name,
    rows: statsRows,
    total: median(measured),
    max: Math.max(...measured),
    byCheck,
    windowed,
    history,
    foldMs: median(foldMs.slice(1)),
    findings,
    failed,
  };
}

console.log(
  `bench:checks — ${OPERATIONAL.length} operational and ${OPTIMIZATION.length} optimization checks, ` +
    `${EPOCHS} epochs per profile (${profiles.join(", ")})`,
);
const results = [];
for (const name of profiles) results.push(await benchProfile(name));

console.log("\nper check, median ms per epoch (epochs after the first):");
console.log(`${"code".padEnd(16)}${results.map((r) => r.name.padStart(10)).join("")}`);
for (const check of OPERATIONAL) {
  const cells = results.map((r) => fmt(r.byCheck.find((c) => c.code === check.code)?.ms ?? NaN).padStart(10));
  console.log(`${check.code.padEnd(16)}${cells.join("")}`);
}
for (const r of results) {
  const slowest = [...r.byCheck].sort((a, b) => b.ms - a.ms).slice(0, 5);
  console.log(
    `\n${r.name}: ${r.rows} rows folded per epoch; all ${OPERATIONAL.length} operational checks together: median ${r.total.toFixed(0)} ms, ` +
      `max ${r.max.toFixed(0)} ms per epoch (target < 2000 ms on large); findings per epoch ${r.findings.join(", ")}` +
      (r.failed.size ? `; FAILED: ${[...r.failed].join(", ")}` : ""),
  );
  console.log(`  five slowest: ${slowest.map((s) => `${s.code} ${s.ms.toFixed(1)} ms`).join(", ")}`);
  if (r.history) {
    const without = new Map(r.byCheck.map((c) => [c.code, c.ms]));
    const grown = [...r.history.byCheck]
      .map((c) => ({ ...c, more: c.ms - (without.get(c.code) ?? 0) }))
      .sort((a, b) => b.more - a.more)
      .slice(0, 5);
    console.log(
      `  with ${r.history.epochs} epochs of history: the next epoch folded in ${r.history.foldMs.toFixed(0)} ms ` +
        `(against ${r.foldMs.toFixed(0)} ms with ${EPOCHS}), all ${OPERATIONAL.length} operational checks over it ${r.history.total.toFixed(0)} ms ` +
        `(median of 5 runs, against ${r.total.toFixed(0)} ms); ` +
        `grown most: ${grown.map((c) => `${c.code} ${(without.get(c.code) ?? 0).toFixed(1)} -> ${c.ms.toFixed(1)} ms`).join(", ")}`,
    );
    console.log(
      `  each view at the latest epoch, median ms of 3: by subquery (max(epoch) of hx.epochs), by parameter`,
    );
    for (const v of r.history.views)
      console.log(
        `    ${`hx.${v.view}`.padEnd(24)}${fmt(v.subqueryMs)}${fmt(v.parameterMs)}   ${v.rows} rows`,
      );
    console.log(
      `  each entity context macro over its default hour, median ms of 3: ending at the latest epoch, at ep_to given`,
    );
    for (const c of r.history.contexts)
      console.log(`    ${c.call.padEnd(32)}${fmt(c.latestMs)}${fmt(c.parameterMs)}   ${c.rows} rows`);
  }
}

console.log(
  `\noptimization checks over the window of all ${EPOCHS} epochs, median ms of 3 runs (rows found):`,
);
console.log(`${"code".padEnd(16)}${results.map((r) => r.name.padStart(18)).join("")}`);
for (const check of OPTIMIZATION) {
  const cells = results.map((r) => {
    const w = r.windowed.find((c) => c.code === check.code);
    return w ? `${fmt(w.ms)} (${w.rows})`.padStart(18) : "-".padStart(18);
  });
  console.log(`${check.code.padEnd(16)}${cells.join("")}`);
}
for (const r of results) {
  const total = r.windowed.reduce((sum, w) => sum + w.ms, 0);
  const slowest = [...r.windowed].sort((a, b) => b.ms - a.ms).slice(0, 5);
  console.log(
    `\n${r.name}: all ${OPTIMIZATION.length} optimization checks one after another: ${total.toFixed(0)} ms; ` +
      `five slowest: ${slowest.map((s) => `${s.code} ${s.ms.toFixed(1)} ms`).join(", ")}`,
  );
}
