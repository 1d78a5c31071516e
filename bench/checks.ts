/**
 * npm run bench:checks — every operational check over simulated epochs, measured on this
 * machine. For each profile: simulated epochs gathered from a real nats-server, folded into
 * a real DuckDB file with the check macros installed, and after each fold all checks run
 * over the new epoch exactly as the catalog side runs them (runEpochChecks). Prints each
 * check's median time, all checks together per epoch, and the five slowest. Asserts nothing.
 *   BENCH_PROFILES=medium,large BENCH_CHECK_EPOCHS=6 npm run bench:checks
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { foldEpoch, installCheckMacros, openCatalog, runEpochChecks } from "../src/catalog/index.ts";
import { CHECKS, epochCheckStatements, installStatements } from "../src/checks/index.ts";
import type { PROFILES } from "../src/simulate/index.ts";
import { BENCH_DB, benchProfiles, median, simulatedEpochs } from "./simulated-epochs.ts";

/** Epochs per profile; the first ones give the delta and history checks something to compare with. */
const profiles = benchProfiles();
const EPOCHS = Number(process.env.BENCH_CHECK_EPOCHS ?? 6);
const fmt = (ms: number) => ms.toFixed(1).padStart(8);

async function benchProfile(name: keyof typeof PROFILES) {
  const dir = await mkdtemp(join(tmpdir(), `natsmon-bench-checks-${name}-`));
  const catalog = await openCatalog({ path: join(dir, `${name}.duckdb`), db: BENCH_DB });
  const statements = epochCheckStatements({ disabledChecks: [], checkThresholds: {} });
  const perCheck = new Map<string, number[]>(CHECKS.map((c) => [c.code, []]));
  const totals: number[] = [];
  const findings: number[] = [];
  const failed = new Set<string>();
  let statsRows = 0;
  try {
    await installCheckMacros(catalog, installStatements());
    for await (const epoch of simulatedEpochs(name, EPOCHS, dir)) {
      const folded = await foldEpoch(catalog, epoch.input);
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
    findings,
    failed,
  };
}

console.log(`bench:checks — ${CHECKS.length} checks, ${EPOCHS} epochs per profile (${profiles.join(", ")})`);
const results = [];
for (const name of profiles) results.push(await benchProfile(name));

console.log("\nper check, median ms per epoch (epochs after the first):");
console.log(`${"code".padEnd(16)}${results.map((r) => r.name.padStart(10)).join("")}`);
for (const check of CHECKS) {
  const cells = results.map((r) => fmt(r.byCheck.find((c) => c.code === check.code)?.ms ?? NaN).padStart(10));
  console.log(`${check.code.padEnd(16)}${cells.join("")}`);
}
for (const r of results) {
  const slowest = [...r.byCheck].sort((a, b) => b.ms - a.ms).slice(0, 5);
  console.log(
    `\n${r.name}: ${r.rows} rows folded per epoch; all ${CHECKS.length} checks together: median ${r.total.toFixed(0)} ms, ` +
      `max ${r.max.toFixed(0)} ms per epoch (target < 2000 ms on large); findings per epoch ${r.findings.join(", ")}` +
      (r.failed.size ? `; FAILED: ${[...r.failed].join(", ")}` : ""),
  );
  console.log(`  five slowest: ${slowest.map((s) => `${s.code} ${s.ms.toFixed(1)} ms`).join(", ")}`);
}
