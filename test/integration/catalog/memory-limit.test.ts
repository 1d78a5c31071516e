/**
 * db.memory-limit's rule (src/config/memory-limit.ts) held against the DuckDB natsmon runs:
 * what the configuration accepts, DuckDB takes; what it refuses for its form, DuckDB refuses
 * too; and the least it accepts opens a catalog. A DuckDB upgrade that reads memory_limit
 * differently fails here.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { DuckDBInstance } from "@duckdb/node-api";
import { foldEpoch, installCheckMacros } from "../../../src/catalog/index.ts";
import { installStatements } from "../../../src/checks/index.ts";
import { loadConfig } from "../../../src/config/index.ts";
import { labEpoch, tempCatalog, TEST_DB } from "./lab-epoch.ts";

async function configAccepts(value: string): Promise<boolean> {
  return (await loadConfig({ env: { NATSMON_DB_MEMORY_LIMIT: value } })).ok;
}

async function duckdbTakes(value: string): Promise<boolean> {
  try {
    const instance = await DuckDBInstance.create(":memory:", { memory_limit: value });
    instance.closeSync();
    return true;
  } catch {
    return false;
  }
}

describe("db.memory-limit against DuckDB's memory_limit", () => {
  const ACCEPTED = [
    "4GB",
    "512 MiB",
    "1.5GB",
    ".5gb",
    "1e3MB",
    "2 gigabytes",
    "32MB",
    "4T",
    "1TiB",
    "none",
    "-1",
  ];
  for (const value of ACCEPTED) {
    test(`${JSON.stringify(value)}: the configuration accepts it and DuckDB takes it`, async () => {
      assert.equal(await configAccepts(value), true);
      assert.equal(await duckdbTakes(value), true);
    });
  }

  const REFUSED = ["lots", "", "80%", "4096", "4PB", "4Gi", "1.2.3GB", "1e30TB", "NULL", "+4GB"];
  for (const value of REFUSED) {
    test(`${JSON.stringify(value)}: the configuration refuses it, as DuckDB does`, async () => {
      assert.equal(await configAccepts(value), false);
      assert.equal(await duckdbTakes(value), false);
    });
  }

  test("at the least the configuration accepts, 32MB, a catalog opens, takes its check macros and folds epochs", async () => {
    await using t = await tempCatalog({ ...TEST_DB, memoryLimit: "32MB", threads: 0 });
    await installCheckMacros(t.catalog, installStatements());
    for (const [i, epoch] of ["2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z"].entries()) {
      const folded = await foldEpoch(t.catalog, labEpoch(epoch, i + 1));
      assert.equal(folded.status, "folded", epoch);
    }
  });
});
