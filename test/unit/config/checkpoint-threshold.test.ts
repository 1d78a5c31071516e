import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { loadConfig, type LoadOptions } from "../../../src/config/index.ts";
import { tempDir } from "../../harness/temp-dir.ts";

const MiB = 1024 ** 2;
const UNITS = "B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024)";

interface Loaded {
  /** db.checkpointThresholdBytes of each system, or each error as `path: message`. */
  then: number[] | string[];
  warnings: string[];
}

async function load(options: LoadOptions): Promise<Loaded> {
  const result = await loadConfig(options);
  const warnings = result.warnings.map((w) => `${w.path}: ${w.message}`);
  return result.ok
    ? { then: result.config.systems.map((s) => s.db.checkpointThresholdBytes), warnings }
    : { then: result.errors.map((e) => `${e.path}: ${e.message}`), warnings };
}

async function loadYaml(yaml: string[]): Promise<Loaded> {
  await using dir = await tempDir();
  const file = join(dir.path, "natsmon.yaml");
  await writeFile(file, [...yaml, ""].join("\n"));
  return await load({ file });
}

const HALF = (where: string, limit: string) =>
  `is more than half of ${where} (${limit}): DuckDB holds what it has not checkpointed in its memory ` +
  "(up to about three quarters of the WAL), leaving the catalog's queries and folds the rest; raise db.memory-limit " +
  "or lower db.checkpoint-threshold";

describe("db.checkpoint-threshold", () => {
  const defaults: [memoryLimit: string | undefined, then: number][] = [
    [undefined, 128 * MiB],
    ["4GB", 128 * MiB],
    ["none", 128 * MiB],
    ["-1", 128 * MiB],
    ["256MB", 64e6],
    ["100MB", 25e6],
    ["32MB", 16 * MiB],
  ];
  for (const [memoryLimit, then] of defaults) {
    test(`not given, with db.memory-limit ${memoryLimit ?? "at its default"}, then ${then} bytes: a quarter of the limit at most, 128 MiB at most, 16 MiB at least`, async () => {
      const env = memoryLimit === undefined ? {} : { NATSMON_DB_MEMORY_LIMIT: memoryLimit };
      assert.deepEqual(await load({ env }), { then: [then], warnings: [] });
    });
  }

  const accepted: [given: string, then: number][] = [
    ["256MiB", 256 * MiB],
    ["1GB", 1e9],
    [" 64MB ", 64e6],
    ["1.5MiB", Math.floor(1.5 * MiB)],
    ["1MB", 1e6],
    ["64GB", 64e9],
  ];
  for (const [given, then] of accepted) {
    test(`given NATSMON_DB_CHECKPOINT_THRESHOLD=${JSON.stringify(given)} with no memory limit, then ${then} bytes`, async () => {
      assert.deepEqual(
        await load({ env: { NATSMON_DB_CHECKPOINT_THRESHOLD: given, NATSMON_DB_MEMORY_LIMIT: "none" } }),
        { then: [then], warnings: [] },
      );
    });
  }

  const refused: [given: string, then: string][] = [
    ["lots", `"lots" is not a size: write a number and a unit, such as "1GB", "512MiB" or "1.5GB"`],
    ["none", `"none" is not a size: write a number and a unit, such as "1GB", "512MiB" or "1.5GB"`],
    ["-1MB", `"-1MB" is not a size: write a number and a unit, such as "1GB", "512MiB" or "1.5GB"`],
    ["80%", `"80%" is not a size: write a number and a unit, such as "1GB", "512MiB" or "1.5GB"`],
    ["128", `"128" has no unit: write one, such as "128MB" (units ${UNITS})`],
    ["128Mi", `"128Mi": "Mi" is not a unit; use ${UNITS}`],
    ["0MB", `"0MB" is no room at all: give a size above 0`],
    ["512KB", `must be at least 1MB ("512KB"): below it the catalog would checkpoint at nearly every fold`],
    ["65GB", `must be at most 64GB ("65GB"): DuckDB keeps what it has not checkpointed in memory`],
  ];
  for (const [given, then] of refused) {
    test(`given NATSMON_DB_CHECKPOINT_THRESHOLD=${JSON.stringify(given)}, then it is refused by its path: ${then}`, async () => {
      assert.deepEqual(await load({ env: { NATSMON_DB_CHECKPOINT_THRESHOLD: given } }), {
        then: [`db.checkpoint-threshold: ${then}`],
        warnings: [],
      });
    });
  }

  test("a number in the file is refused by its path, as it names no unit", async () => {
    assert.deepEqual(await loadYaml(["db: {checkpoint-threshold: 128}"]), {
      then: ['db.checkpoint-threshold: must be a size such as "128MiB" or "1GB"'],
      warnings: [],
    });
  });

  test("a system's own threshold wins over the top level's, and a system without one keeps the top level's", async () => {
    assert.deepEqual(
      await loadYaml([
        "node: {id: n1}",
        "db: {checkpoint-threshold: 256MiB, memory-limit: 4GB}",
        "systems: [{id: a, db: {checkpoint-threshold: 32MiB}}, {id: b}]",
      ]),
      { then: [32 * MiB, 256 * MiB], warnings: [] },
    );
  });

  test("a system's own memory limit sets its default, the others keep theirs", async () => {
    assert.deepEqual(
      await loadYaml(["node: {id: n1}", "systems: [{id: a, db: {memory-limit: 200MB}}, {id: b}]"]),
      {
        then: [50e6, 128 * MiB],
        warnings: [],
      },
    );
  });

  test("given more than half of the memory limit, then it is accepted with a warning naming where each is set", async () => {
    assert.deepEqual(await load({ env: { NATSMON_DB_CHECKPOINT_THRESHOLD: "600MB" } }), {
      then: [600e6],
      warnings: [`db.checkpoint-threshold: ${HALF("db.memory-limit", "1GB")}`],
    });
    assert.deepEqual(
      await loadYaml([
        "node: {id: n1}",
        "db: {memory-limit: 4GB}",
        "systems: [{id: a, db: {checkpoint-threshold: 300MB, memory-limit: 512MB}}, {id: b, db: {checkpoint-threshold: 300MB}}]",
      ]),
      {
        then: [300e6, 300e6],
        warnings: [`systems[0].db.checkpoint-threshold: ${HALF("systems[0].db.memory-limit", "512MB")}`],
      },
    );
  });

  test("with no memory limit, no threshold is warned about", async () => {
    assert.deepEqual(
      await load({ env: { NATSMON_DB_CHECKPOINT_THRESHOLD: "8GB", NATSMON_DB_MEMORY_LIMIT: "none" } }),
      { then: [8e9], warnings: [] },
    );
  });
});
