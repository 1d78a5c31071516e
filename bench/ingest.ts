/**
 * npm run bench:ingest — the collection and fold path at scale, measured on this machine.
 * For each profile: a real nats-server, the simulator answering `$SYS` on it, the
 * scraper's own gather of every source, and the catalog's fold of each epoch into a real
 * DuckDB file. Then a bare DuckDB Appender writes the same rows into an empty copy of the
 * schema, for the fold / bare ratio. Prints figures; asserts nothing.
 *   BENCH_PROFILES=medium,large BENCH_EPOCHS=60 [BENCH_LARGE_EPOCHS=60] npm run bench:ingest
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
import { foldEpoch, openCatalog, type FoldPhases } from "../src/catalog/index.ts";
import type { PROFILES } from "../src/simulate/index.ts";
import { BENCH_DB, benchProfiles, median, simulatedEpochs } from "./simulated-epochs.ts";

const profiles = benchProfiles();
const EPOCHS = Number(process.env.BENCH_EPOCHS ?? 60);
/** Epochs per slice of the bare Appender's bulk run (one transaction per table either way). */
const BULK_EPOCHS = 10;
const mb = (n: number) => (n / 1e6).toFixed(1);

async function benchProfile(name: keyof typeof PROFILES, epochs: number) {
  const dir = await mkdtemp(join(tmpdir(), `natsmon-bench-${name}-`));
  const catalog = await openCatalog({ path: join(dir, `${name}.duckdb`), db: BENCH_DB });
  const scrapeMs: number[] = [];
  const foldMs: number[] = [];
  const rowsPerEpoch: number[] = [];
  const phases: FoldPhases[] = [];
  const bytes: number[] = [];
  const detailsMs: number[] = [];
  const detailBytes: number[] = [];
  for await (const epoch of simulatedEpochs(name, epochs, dir)) {
    scrapeMs.push(epoch.scrapeMs);
    bytes.push(epoch.bytes);
    detailsMs.push(epoch.detailsMs);
    detailBytes.push(epoch.detailBytes);
    const result = await foldEpoch(catalog, epoch.input);
    if (result.status !== "folded") throw new Error(`epoch ${epoch.input.marker.epoch} was not folded`);
    foldMs.push(result.ms);
    phases.push(result.phases);
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
    detailsMs: median(detailsMs),
    detailBytes: median(detailBytes),
    foldMs: median(foldMs),
    rows: median(rowsPerEpoch),
    foldRate,
    phases: {
      build: median(phases.map((p) => p.build)),
      fill: median(phases.map((p) => p.fill)),
      append: median(phases.map((p) => p.append)),
      commit: median(phases.map((p) => p.commit)),
    },
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
 *
 * Rows are read back from the folded file a slice at a time (an epoch, or BULK_EPOCHS
 * epochs) and only the Appender's work is timed: as the fold holds one epoch's input at a
 * time, the bare run holds one slice's rows, so 60 large epochs fit in memory and neither
 * side pays for collecting a heap the other does not have.
 */
async function bareAppender(
  source: string,
  target: (kind: string) => string,
): Promise<{ perEpoch: number; bulk: number; statsRows: number; byTable: [string, number][] }> {
  const src = await DuckDBInstance.create(source, { access_mode: "READ_ONLY" });
  const srcCon = await src.connect();
  const tables = (
    await srcCon.runAndReadAll(
      // The fold's tables: each row belongs to an epoch (hx.findings_firing, the checks' state, has none).
      `SELECT t.table_name, t.sql FROM duckdb_tables() t
        WHERE t.schema_name = 'hx' AND t.table_name <> 'migrations'
          AND EXISTS (SELECT 1 FROM duckdb_columns() c WHERE c.schema_name = 'hx' AND c.table_name = t.table_name
                        AND c.column_name IN ('epoch', 'first_epoch'))
        ORDER BY t.table_name`,
    )
  ).getRowsJS() as [string, string][];
  /** Each table's rows belong to the epoch that wrote them (ident: first_epoch, others: epoch). */
  const epochColumn = (table: string) => (table.endsWith("_ident") ? "first_epoch" : "epoch");
  const epochs = (
    await srcCon.runAndReadAll(
      tables.map(([t]) => `SELECT DISTINCT ${epochColumn(t)} AS e FROM hx.${t}`).join(" UNION ") +
        " ORDER BY e",
    )
  )
    .getRows()
    .map(([e]) => e!);
  const types = new Map<string, DuckDBType[]>();
  const counts = new Map<string, number>();
  for (const [table] of tables) {
    const reader = await srcCon.runAndReadAll(`SELECT * FROM hx.${table} LIMIT 0`);
    types.set(table, reader.columnTypes());
    counts.set(
      table,
      Number((await srcCon.runAndReadAll(`SELECT count(*) FROM hx.${table}`)).getRows()[0]![0]),
    );
  }
  /** The table's rows of epochs [from, to] (indexes into `epochs`). */
  const rowsOf = async (table: string, from: number, to: number): Promise<DuckDBValue[][]> => {
    const column = epochColumn(table);
    const reader = await srcCon.runAndReadAll(`SELECT * FROM hx.${table} WHERE ${column} BETWEEN $1 AND $2`, [
      epochs[from]!,
      epochs[to]!,
    ]);
    return reader.getRows();
  };
  /** Appends `rows`; answers the ms the Appender's work took. */
  const append = async (con: DuckDBConnection, table: string, rows: DuckDBValue[][]): Promise<number> => {
    const columnTypes = types.get(table)!;
    const t0 = performance.now();
    const appender = await con.createAppender(table, "hx");
    for (let start = 0; start < rows.length; start += 2048) {
      const slice = rows.slice(start, start + 2048);
      const chunk = DuckDBDataChunk.create(columnTypes, slice.length);
      chunk.setColumns(columnTypes.map((_, c) => slice.map((row) => row[c] ?? null)));
      appender.appendDataChunk(chunk);
    }
    appender.flushSync();
    appender.closeSync();
    return performance.now() - t0;
  };
  const timed = async (call: () => Promise<unknown>): Promise<number> => {
    const t0 = performance.now();
    await call();
    return performance.now() - t0;
  };
  const fresh = async (kind: string) => {
    const db = await DuckDBInstance.create(target(kind));
    const con = await db.connect();
    await con.run("CREATE SCHEMA hx");
    for (const [, sql] of tables) await con.run(sql);
    return { db, con };
  };
  let rows = 0;
  for (const n of counts.values()) rows += n;

  const perEpochDb = await fresh("per-epoch");
  let perEpochMs = 0;
  for (let e = 0; e < epochs.length; e++) {
    const slices = new Map<string, DuckDBValue[][]>();
    for (const [table] of tables) slices.set(table, await rowsOf(table, e, e));
    perEpochMs += await timed(() => perEpochDb.con.run("BEGIN TRANSACTION"));
    for (const [table] of tables) {
      const list = slices.get(table)!;
      if (list.length > 0) perEpochMs += await append(perEpochDb.con, table, list);
    }
    perEpochMs += await timed(() => perEpochDb.con.run("COMMIT"));
  }
  perEpochDb.con.closeSync();
  perEpochDb.db.closeSync();

  const bulkDb = await fresh("bulk");
  let bulkMs = 0;
  for (const [table] of tables) {
    bulkMs += await timed(() => bulkDb.con.run("BEGIN TRANSACTION"));
    for (let from = 0; from < epochs.length; from += BULK_EPOCHS) {
      const list = await rowsOf(table, from, Math.min(epochs.length, from + BULK_EPOCHS) - 1);
      if (list.length > 0) bulkMs += await append(bulkDb.con, table, list);
    }
    bulkMs += await timed(() => bulkDb.con.run("COMMIT"));
  }
  bulkDb.con.closeSync();
  bulkDb.db.closeSync();
  srcCon.closeSync();
  src.closeSync();

  // An entity-epoch is one entity measured in one epoch: one row of a _stats table.
  const byTable = [...counts]
    .filter(([table]) => table.endsWith("_stats"))
    .map(([table, n]) => [table, n] as [string, number]);
  return {
    perEpoch: rows / (perEpochMs / 1000),
    bulk: rows / (bulkMs / 1000),
    statsRows: byTable.reduce((n, [, c]) => n + c, 0),
    byTable,
  };
}

const results = [];
for (const name of profiles) {
  const epochs = name === "large" ? Number(process.env.BENCH_LARGE_EPOCHS ?? EPOCHS) : EPOCHS;
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
      `    of which the accounts in detail   ${r.detailsMs.toFixed(0)} ms, ${(r.detailBytes / 1e3).toFixed(1)} kB`,
      `  fold time per epoch (median)        ${r.foldMs.toFixed(0)} ms  (${r.rows} rows)`,
      `    build rows / fill chunks / append / commit (medians)  ${[r.phases.build, r.phases.fill, r.phases.append, r.phases.commit].map((ms) => ms.toFixed(0)).join(" / ")} ms`,
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
