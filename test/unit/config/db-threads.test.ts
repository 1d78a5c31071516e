import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { loadConfig, type LoadOptions } from "../../../src/config/index.ts";
import { tempDir } from "../../harness/temp-dir.ts";

const RANGE = "must be 0 (a thread per core) or a whole number of threads from 1 to 1024";
const TOO_MANY = `${RANGE}: DuckDB starts every thread when the catalog opens, and that many would only take the machine's process ids and memory`;
const ABOVE_CORES = (threads: number, cores: number) =>
  `is ${threads}, more than the ${cores} cores of this machine: DuckDB starts every thread when the catalog ` +
  "opens, and those beyond the cores only wait for one; 0 gives a thread per core";

interface Loaded {
  /** db.threads of each system, or each error as `path: message`. */
  then: number[] | string[];
  warnings: string[];
}

async function load(options: LoadOptions): Promise<Loaded> {
  const result = await loadConfig({ cores: 4, ...options });
  const warnings = result.warnings.map((w) => `${w.path}: ${w.message}`);
  return result.ok
    ? { then: result.config.systems.map((s) => s.db.threads), warnings }
    : { then: result.errors.map((e) => `${e.path}: ${e.message}`), warnings };
}

async function loadYaml(yaml: string[], options: LoadOptions = {}): Promise<Loaded> {
  await using dir = await tempDir();
  const file = join(dir.path, "natsmon.yaml");
  await writeFile(file, [...yaml, ""].join("\n"));
  return await load({ file, ...options });
}

describe("db.threads", () => {
  const accepted: [given: string, then: number][] = [
    ["0", 0],
    ["1", 1],
    ["4", 4],
  ];
  for (const [given, then] of accepted) {
    test(`given NATSMON_DB_THREADS=${given} on a machine of 4 cores, then ${then} is passed on without a warning`, async () => {
      assert.deepEqual(await load({ env: { NATSMON_DB_THREADS: given } }), { then: [then], warnings: [] });
    });
  }

  const refused: [given: string, then: string][] = [
    ["-1", RANGE],
    ["1.5", RANGE],
    ["1025", TOO_MANY],
    ["100000", TOO_MANY],
    [String(2 ** 31), TOO_MANY],
    ["1e21", TOO_MANY],
  ];
  for (const [given, then] of refused) {
    test(`given NATSMON_DB_THREADS=${given}, then db.threads is refused: ${then}`, async () => {
      assert.deepEqual(await load({ env: { NATSMON_DB_THREADS: given } }), {
        then: [`db.threads: ${then}`],
        warnings: [],
      });
    });
  }

  test("given more threads than the machine's cores, up to the bound, then it is accepted with a warning naming the path", async () => {
    for (const threads of [5, 1024]) {
      assert.deepEqual(await load({ env: { NATSMON_DB_THREADS: String(threads) } }), {
        then: [threads],
        warnings: [`db.threads: ${ABOVE_CORES(threads, 4)}`],
      });
    }
  });

  test("given no cores option, then the warning is against the cores this machine offers (os.availableParallelism)", async () => {
    const { availableParallelism } = await import("node:os");
    const cores = availableParallelism();
    const result = await loadConfig({ env: { NATSMON_DB_THREADS: String(cores + 1) } });
    assert.deepEqual(
      result.warnings.map((w) => `${w.path}: ${w.message}`),
      [`db.threads: ${ABOVE_CORES(cores + 1, cores)}`],
    );
  });

  test("given several systems, then each refused db.threads is named by the system's path, with every other problem", async () => {
    const loaded = await loadYaml([
      "node: {id: n}",
      "db: {threads: 5000, memory-limit: lots}",
      "systems: [{id: a, db: {threads: -2}}, {id: b, db: {threads: 2}}, {id: c, db: {threads: 2048}}]",
    ]);
    assert.deepEqual(loaded.then.sort(), [
      'db.memory-limit: "lots" is not a size: write a number and a unit, such as "4GB", "512MiB" or "1.5GB", or "none" for no limit',
      `db.threads: ${TOO_MANY}`,
      `systems[0].db.threads: ${RANGE}`,
      `systems[2].db.threads: ${TOO_MANY}`,
    ]);
    assert.deepEqual(loaded.warnings, []);
  });

  test("given threads above the cores, then the warning names where each catalog's value is set, once, and leaves out scrape-only systems", async () => {
    const loaded = await loadYaml([
      "node: {id: n}",
      "db: {threads: 8}",
      "systems:",
      "  - {id: a}",
      "  - {id: b}",
      "  - {id: c, db: {threads: 2}}",
      "  - {id: d, db: {threads: 16}}",
      "  - {id: e, roles: [scrape], db: {threads: 32}}",
    ]);
    assert.deepEqual(loaded, {
      then: [8, 8, 2, 16, 32],
      warnings: [`db.threads: ${ABOVE_CORES(8, 4)}`, `systems[3].db.threads: ${ABOVE_CORES(16, 4)}`],
    });
  });

  test("given a top-level db.threads every system overrides, then it is not warned about", async () => {
    const loaded = await loadYaml(["db: {threads: 64}", "system: {id: a, db: {threads: 4}}"]);
    assert.deepEqual(loaded, { then: [4], warnings: [] });
  });
});
