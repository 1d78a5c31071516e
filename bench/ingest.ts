/**
 * npm run bench:ingest — the collection and fold path at scale, measured on this machine.
 * For each profile: a real nats-server, the simulator answering `$SYS` on it, the
 * scraper's own gather of every source, and the catalog's fold of each epoch into a real
 * DuckDB file. Then a bare DuckDB Appender writes the same rows into an empty copy of the
 * schema, for the fold / bare ratio. Prints figures; asserts nothing.
 *   BENCH_PROFILES=medium,large BENCH_EPOCHS=60 npm run bench:ingest
 */
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  DuckDBDataChunk,
  DuckDBInstance,
  type DuckDBConnection,
  type DuckDBType,
  type DuckDBValue,
} from "@duckdb/node-api";
import { foldEpoch, openCatalog } from "../src/catalog/index.ts";
import type { PROFILES } from "../src/simulate/index.ts";
import { BENCH_DB, benchProfiles, median, simulatedEpochs } from "./simulated-epochs.ts";

const profiles = benchProfiles();
const EPOCHS = Number(process.env.BENCH_EPOCHS ?? 60);
const mb = (n: number) => (n / 1e6).toFixed(1);

async function benchProfile(name: keyof typeof PROFILES, epochs: number) {
  const dir = await mkdtemp(join(tmpdir(), `natsmon-bench-${name}-`));
  const catalog = await openCatalog({ path: join(dir, `${name}.duckdb`), db: BENCH_DB });
  const scrapeMs: number[] = [];
  const foldMs: number[] = [];
  const rowsPerEpoch: number[] = [];
  const bytes: number[] = [];
  for await (const epoch of simulatedEpochs(name, epochs, dir)) {
    scrapeMs.push(epoch.scrapeMs);
    bytes.push(epoch.bytes);
    const result = await foldEpoch(catalog, epoch.input);
    if (result.status !== "folded") throw new Error(`epoch ${epoch.input.marker.epoch} was not folded`);
    foldMs.push(result.ms);
    rowsPerEpoch.push(result.rows);
  }
  await catalog[Symbol.asyncDispose]();
  const dbFile = join(dir, `${name}.duckdb`);
  const fileBytes = (await stat(dbFile)).size;
  const bare = await bareAppender(dbFile, (kind) => join(dir, `bare-${kind}.duckdb`));
  await rm(dir, { recursive: true, force: true });
  const foldRate = median(rowsPerEpoch) / (median(foldMs) / 1000);
  return {
    name,
    epochs,
    scrapeMs: median(scrapeMs),
    bytes: median(bytes),
    foldMs: median(foldMs),
    rows: median(rowsPerEpoch),
    foldRate,
    bare,
    perEntityEpoch: fileBytes / bare.statsRows,
    fileBytes,
    entities: bare.statsRows / epochs,
  };
}

/**
 * The bare DuckDB Appender writing the folded file's hx rows into an empty copy of the schema,
 * in DataChunks of 2,048 rows (its fastest path), two ways: per epoch, one transaction each,
 * as the fold must (an epoch is atomic), and in bulk, one transaction per table for all
 * epochs at once (the Appender's best case, which no per-epoch ingest can reach).
 */
async function bareAppender(
  source: string,
  target: (kind: string) => string,
): Promise<{ perEpoch: number; bulk: number; statsRows: number; byTable: [string, number][] }> {
  const src = await DuckDBInstance.create(source);
  const srcCon = await src.connect();
  const tables = (
    await srcCon.runAndReadAll(
      "SELECT table_name, sql FROM duckdb_tables() WHERE schema_name = 'hx' AND table_name <> 'migrations' ORDER BY table_name",
    )
  ).getRowsJS() as [string, string][];
  // Each table's rows by the epoch that wrote them (ident: first_epoch, others: epoch).
  const data = new Map<
    string,
    { types: DuckDBType[]; byEpoch: Map<string, DuckDBValue[][]>; all: DuckDBValue[][] }
  >();
  const epochs = new Set<string>();
  for (const [table] of tables) {
    const column = table.endsWith("_ident") ? "first_epoch" : "epoch";
    const reader = await srcCon.runAndReadAll(`SELECT ${column}::VARCHAR AS k, * FROM hx.${table}`);
    const rows = reader.getRows();
    const byEpoch = new Map<string, DuckDBValue[][]>();
    for (const row of rows) {
      const k = String(row[0]);
      epochs.add(k);
      const list = byEpoch.get(k) ?? [];
      list.push(row.slice(1));
      byEpoch.set(k, list);
    }
    data.set(table, { types: reader.columnTypes().slice(1), byEpoch, all: rows.map((r) => r.slice(1)) });
  }
  srcCon.closeSync();
  src.closeSync();
  const append = async (con: DuckDBConnection, table: string, rows: DuckDBValue[][]) => {
    const { types } = data.get(table)!;
    const appender = await con.createAppender(table, "hx");
    for (let start = 0; start < rows.length; start += 2048) {
      const slice = rows.slice(start, start + 2048);
      const chunk = DuckDBDataChunk.create(types, slice.length);
      chunk.setColumns(types.map((_, c) => slice.map((row) => row[c] ?? null)));
      appender.appendDataChunk(chunk);
    }
    appender.flushSync();
    appender.closeSync();
  };
  const fresh = async (kind: string) => {
    const db = await DuckDBInstance.create(target(kind));
    const con = await db.connect();
    await con.run("CREATE SCHEMA hx");
    for (const [, sql] of tables) await con.run(sql);
    return { db, con };
  };
  let rows = 0;
  for (const { all } of data.values()) rows += all.length;

  const perEpochDb = await fresh("per-epoch");
  let t0 = performance.now();
  for (const epoch of [...epochs].sort()) {
    await perEpochDb.con.run("BEGIN TRANSACTION");
    for (const [table] of tables) {
      const list = data.get(table)!.byEpoch.get(epoch);
      if (list) await append(perEpochDb.con, table, list);
    }
    await perEpochDb.con.run("COMMIT");
  }
  const perEpochMs = performance.now() - t0;
  perEpochDb.con.closeSync();
  perEpochDb.db.closeSync();

  const bulkDb = await fresh("bulk");
  t0 = performance.now();
  for (const [table] of tables) {
    await bulkDb.con.run("BEGIN TRANSACTION");
    await append(bulkDb.con, table, data.get(table)!.all);
    await bulkDb.con.run("COMMIT");
  }
  const bulkMs = performance.now() - t0;
  bulkDb.con.closeSync();
  bulkDb.db.closeSync();

  // An entity-epoch is one entity measured in one epoch: one row of a _stats table.
  const byTable = [...data]
    .filter(([table]) => table.endsWith("_stats"))
    .map(([table, d]) => [table, d.all.length] as [string, number]);
  return {
    perEpoch: rows / (perEpochMs / 1000),
    bulk: rows / (bulkMs / 1000),
    statsRows: byTable.reduce((n, [, c]) => n + c, 0),
    byTable,
  };
}

const results = [];
for (const name of profiles) {
  const epochs = name === "large" ? Number(process.env.BENCH_LARGE_EPOCHS ?? 10) : EPOCHS;
  process.stderr.write(`${name}: ${epochs} epochs…\n`);
  results.push(await benchProfile(name, epochs));
}
const peakRss = process.resourceUsage().maxRSS * 1024;
for (const r of results) {
  process.stdout.write(
    [
      `profile ${r.name} (${Math.round(r.entities).toLocaleString("en")} entities measured per epoch, ${r.epochs} epochs)`,
      `  scrape time per epoch (median)      ${r.scrapeMs.toFixed(0)} ms`,
      `  bytes received per epoch (gzip)     ${mb(r.bytes)} MB`,
      `  fold time per epoch (median)        ${r.foldMs.toFixed(0)} ms  (${r.rows} rows)`,
      `  fold rate                           ${Math.round(r.foldRate).toLocaleString("en")} rows/s`,
      `  bare Appender, same rows per epoch  ${Math.round(r.bare.perEpoch).toLocaleString("en")} rows/s`,
      `  fold / bare (per epoch)             ${(r.foldRate / r.bare.perEpoch).toFixed(2)}`,
      `  bare Appender, all epochs in bulk   ${Math.round(r.bare.bulk).toLocaleString("en")} rows/s`,
      `  fold / bare (bulk)                  ${(r.foldRate / r.bare.bulk).toFixed(2)}`,
      `  DuckDB file                         ${mb(r.fileBytes)} MB = ${r.perEntityEpoch.toFixed(1)} bytes per entity-epoch`,
      `  entity-epochs (rows of _stats tables): ${r.bare.byTable
        .filter(([, n]) => n > 0)
        .map(([t, n]) => `${t.replace(/_stats$/, "")} ${(n / r.epochs).toLocaleString("en")}`)
        .join(", ")} per epoch`,
      "",
    ].join("\n"),
  );
}
process.stdout.write(`peak RSS                              ${mb(peakRss)} MB\n`);
