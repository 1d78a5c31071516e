/**
 * A catalog in memory with rows in every hx table, for the migrations that rewrite the hx
 * views: each view must show the same rows after them, and a filter on epoch must reach
 * their scans.
 */
import assert from "node:assert/strict";
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";
import { MIGRATIONS } from "../../../src/catalog/index.ts";
import { migrate } from "../../../src/catalog/migrations/index.ts";
import { rowsReadByTable } from "../../harness/plan-rows.ts";
import { sampleValue } from "./sample-values.ts";

export const EPOCHS = 5;
export const ENTITIES = 3;
/** The epochs at which each entity's configuration changes: 1 at 0, 2 and 3; 2 at 1; 3 never. */
export const OPTS_AT: Readonly<Record<number, readonly number[]>> = { 1: [0, 2, 3], 2: [1], 3: [] };

export const epochAt = (e: number) => `TIMESTAMPTZ '2026-11-01 00:00:00+00' + INTERVAL ${e} MINUTE`;

export async function all(con: DuckDBConnection, sql: string): Promise<Record<string, unknown>[]> {
  return (await con.runAndReadAll(sql)).getRowObjectsJS();
}

/**
 * Rows in every hx table: `ENTITIES` entities, each with a row per epoch in the tables with
 * an epoch, its _opts rows at OPTS_AT, one _ident row. Every *_pk column holds the entity's
 * number and ident names are `v<n>`, so the views' joins find each other's rows.
 */
export async function fill(con: DuckDBConnection): Promise<void> {
  const columns = Map.groupBy(
    await all(
      con,
      `SELECT table_name AS t, column_name AS c, data_type AS type FROM duckdb_columns()
       WHERE schema_name = 'hx' AND table_name IN (SELECT table_name FROM duckdb_tables() WHERE schema_name = 'hx')
         AND table_name <> 'migrations' ORDER BY column_index`,
    ),
    (r) => String(r.t),
  );
  // Tables keyed by epoch alone (hx.epochs, hx.check_runs) get one row an epoch.
  const byEpoch = new Set(
    (
      await all(
        con,
        `SELECT table_name AS t FROM duckdb_constraints() WHERE schema_name = 'hx' AND constraint_type = 'PRIMARY KEY'
           AND NOT list_bool_or(list_transform(constraint_column_names, c -> c LIKE '%\\_pk' ESCAPE '\\'))`,
      )
    ).map((r) => String(r.t)),
  );
  for (const [table, cols] of columns) {
    const names = cols.map((c) => String(c.c));
    const keys: [number, number | undefined][] = [];
    for (let pk = 1; pk <= ENTITIES; pk++) {
      if (table.endsWith("_opts")) for (const e of OPTS_AT[pk]!) keys.push([pk, e]);
      else if (names.includes("epoch") && (pk === 1 || !byEpoch.has(table)))
        for (let e = 0; e < EPOCHS; e++) keys.push([pk, e]);
      else if (names.includes("epoch")) continue;
      else keys.push([pk, undefined]);
    }
    if (keys.length === 0) continue;
    const values = keys.map(([pk, e]) => {
      const row = cols.map((c) => {
        const name = String(c.c);
        if (name === "epoch") return epochAt(e!);
        if (name.endsWith("_pk")) return String(pk);
        return sampleValue(String(c.type), e === undefined ? pk : 100 * pk + 10 * e + 7);
      });
      return `(${row.join(", ")})`;
    });
    await con.run(
      `INSERT INTO hx.${table} (${names.map((n) => `"${n}"`).join(", ")}) VALUES ${values.join(", ")}`,
    );
  }
}

export async function views(con: DuckDBConnection): Promise<string[]> {
  return (
    await all(
      con,
      "SELECT view_name AS v FROM duckdb_views() WHERE schema_name = 'hx' AND NOT internal ORDER BY 1",
    )
  ).map((r) => String(r.v));
}

/** Rows of `table` read to answer `view` at the latest epoch, named by a subquery. */
export async function readAtLatest(con: DuckDBConnection, view: string, table: string): Promise<number> {
  const plan = await con.runAndReadAll(
    `EXPLAIN (ANALYZE, FORMAT JSON) SELECT * FROM hx.${view} WHERE epoch = (SELECT max(epoch) FROM hx.epochs)`,
  );
  return rowsReadByTable(plan.getRowsJS()[0]?.[1] as string).get(table) ?? 0;
}

/** Copies every hx view's rows into a temp table; returns each view's row count. */
export async function snapshotViews(con: DuckDBConnection): Promise<Map<string, number>> {
  const before = new Map<string, number>();
  for (const view of await views(con)) {
    await con.run(`CREATE TEMP TABLE "before_${view}" AS SELECT * FROM hx.${view}`);
    before.set(view, Number((await all(con, `SELECT count(*) AS n FROM "before_${view}"`))[0]!.n));
  }
  return before;
}

/** The same views as `snapshotViews` saw, each showing the same rows (as a multiset). */
export async function assertViewsShowSnapshot(
  con: DuckDBConnection,
  before: ReadonlyMap<string, number>,
): Promise<void> {
  assert.deepEqual(await views(con), [...before.keys()], "the same views");
  for (const [view, n] of before) {
    const [diff] = await all(
      con,
      `SELECT (SELECT count(*) FROM (SELECT * FROM "before_${view}" EXCEPT ALL SELECT * FROM hx.${view})) AS gone,
              (SELECT count(*) FROM (SELECT * FROM hx.${view} EXCEPT ALL SELECT * FROM "before_${view}")) AS added`,
    );
    assert.deepEqual(
      [Number(diff!.gone), Number(diff!.added)],
      [0, 0],
      `hx.${view} (${n} rows) shows what it showed`,
    );
  }
}

/** hx columns and views without a comment (db.columns shows every one's). */
export async function uncommented(con: DuckDBConnection): Promise<Record<string, unknown>[]> {
  return all(
    con,
    `SELECT table_name || '.' || column_name AS c FROM duckdb_columns() WHERE schema_name = 'hx' AND comment IS NULL
     UNION ALL SELECT view_name FROM duckdb_views() WHERE schema_name = 'hx' AND comment IS NULL`,
  );
}

/** A catalog in memory at migration `version`, `fill`ed, for `work`; closed after. */
export async function withFilledCatalogAt(
  version: number,
  work: (con: DuckDBConnection) => Promise<void>,
): Promise<void> {
  const instance = await DuckDBInstance.create(":memory:");
  const con = await instance.connect();
  try {
    await migrate(con, MIGRATIONS.slice(0, version));
    await fill(con);
    await work(con);
  } finally {
    con.closeSync();
    instance.closeSync();
  }
}
