import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { loadConfig } from "../../../src/config/index.ts";
import { tempDir } from "../../harness/temp-dir.ts";

const UNITS = "B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024)";
const NOT_A_SIZE = (v: string) =>
  `"${v}" is not a size: write a number and a unit, such as "4GB", "512MiB" or "1.5GB", or "none" for no limit`;
const TOO_LITTLE = (v: string) =>
  `must be at least 32MB: with "${v}" natsmon's catalog would not open (DuckDB runs out of memory creating its tables)`;

/** db.memory-limit as NATSMON_DB_MEMORY_LIMIT gives it: the value in force, or each error as `path: message`. */
async function memoryLimit(value: string): Promise<string | string[]> {
  const result = await loadConfig({ env: { NATSMON_DB_MEMORY_LIMIT: value } });
  return result.ok
    ? result.config.systems[0]!.db.memoryLimit
    : result.errors.map((e) => `${e.path}: ${e.message}`);
}

describe("db.memory-limit, as DuckDB 1.5 reads memory_limit", () => {
  const accepted: [given: string, then: string][] = [
    ["4GB", "4GB"],
    ["512 MiB", "512 MiB"],
    ["1.5GB", "1.5GB"],
    [".5gb", ".5gb"],
    ["1e3MB", "1e3MB"],
    ["2 gigabytes", "2 gigabytes"],
    ["32MB", "32MB"],
    ["4T", "4T"],
    ["  1GiB ", "1GiB"],
    ["none", "none"],
    ["-1", "-1"],
  ];
  for (const [given, then] of accepted) {
    test(`accepts ${JSON.stringify(given)}, passing ${JSON.stringify(then)} to DuckDB`, async () => {
      assert.equal(await memoryLimit(given), then);
    });
  }

  const refused: [given: string, then: string][] = [
    ["lots", NOT_A_SIZE("lots")],
    ["", NOT_A_SIZE("")],
    ["4 GB x", NOT_A_SIZE("4 GB x")],
    ["1.2.3GB", NOT_A_SIZE("1.2.3GB")],
    ["-lots", NOT_A_SIZE("-lots")],
    ["null", NOT_A_SIZE("null")],
    ["80%", `"80%": DuckDB takes no percentage for its memory limit; give a size such as "4GB" or "512MiB"`],
    ["4096", `"4096" has no unit: write one, such as "4096MB" (units ${UNITS})`],
    ["4PB", `"4PB": "PB" is not a unit DuckDB takes; use ${UNITS}`],
    ["4Gi", `"4Gi": "Gi" is not a unit DuckDB takes; use ${UNITS}`],
    ["16MB", TOO_LITTLE("16MB")],
    ["0GB", TOO_LITTLE("0GB")],
    ["1e30TB", 'must be less than 8 EiB, which DuckDB cannot count ("1e30TB"); write "none" for no limit'],
  ];
  for (const [given, then] of refused) {
    test(`refuses ${JSON.stringify(given)}: ${then}`, async () => {
      assert.deepEqual(await memoryLimit(given), [`db.memory-limit: ${then}`]);
    });
  }

  test("names the system whose own db.memory-limit is refused, with every other problem of the file", async () => {
    await using dir = await tempDir();
    const file = join(dir.path, "natsmon.yaml");
    await writeFile(
      file,
      [
        "node: {id: n}",
        "db: {memory-limit: lots, threads: -1}",
        "systems: [{id: a, db: {memory-limit: 80%}}, {id: b, db: {memory-limit: 2GB}}]",
        "",
      ].join("\n"),
    );
    const result = await loadConfig({ file });
    assert.equal(result.ok, false);
    if (result.ok) return;
    assert.deepEqual(result.errors.map((e) => `${e.path}: ${e.message}`).sort(), [
      `db.memory-limit: ${NOT_A_SIZE("lots")}`,
      "db.threads: must be 0 (a thread per core) or a whole number of threads from 1 to 1024",
      'systems[0].db.memory-limit: "80%": DuckDB takes no percentage for its memory limit; give a size such as "4GB" or "512MiB"',
    ]);
  });
});
