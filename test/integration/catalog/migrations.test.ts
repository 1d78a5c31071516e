import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { MIGRATIONS, openCatalog } from "../../../src/catalog/index.ts";
import { migrate } from "../../../src/catalog/migrations/index.ts";
import { tempDir } from "../../harness/temp-dir.ts";
import { rows, tempCatalog, TEST_DB } from "./lab-epoch.ts";
import { sampleValue } from "./sample-values.ts";

test("migrations apply once, in order, each recorded with its version and name", async () => {
  await using dir = await tempDir("natsmon-catalog-");
  const path = join(dir.path, "sys.duckdb");
  {
    await using catalog = await openCatalog({ path, db: TEST_DB });
    const applied = await rows(
      catalog,
      "SELECT version, name, applied_at FROM hx.migrations ORDER BY version",
    );
    assert.deepEqual(
      applied.map((r) => [r.version, r.name]),
      MIGRATIONS.map((m) => [m.version, m.name]),
    );
    assert.ok(applied.every((r) => r.applied_at instanceof Date));
  }
  // Opening again applies nothing and keeps the first application times.
  const before = await readMigrations(path);
  {
    await using _catalog = await openCatalog({ path, db: TEST_DB });
  }
  assert.deepEqual(await readMigrations(path), before);
});

test("the hx, main, checks and contexts schemas exist", async () => {
  await using t = await tempCatalog();
  const schemas = await rows(
    t.catalog,
    "SELECT schema_name FROM duckdb_schemas() WHERE database_name = current_database() ORDER BY 1",
  );
  const names = schemas.map((r) => r.schema_name);
  for (const schema of ["checks", "contexts", "hx", "main"]) assert.ok(names.includes(schema), schema);
});

test("every hx table and view and every one of their columns carries a comment", async () => {
  await using t = await tempCatalog();
  const tables = await rows(
    t.catalog,
    `SELECT table_name AS name, comment FROM duckdb_tables() WHERE schema_name = 'hx'
     UNION ALL SELECT view_name, comment FROM duckdb_views() WHERE schema_name = 'hx'`,
  );
  assert.ok(tables.length >= 13, `found ${tables.length} tables and views`);
  assert.deepEqual(
    tables.filter((r) => !r.comment).map((r) => r.name),
    [],
    "tables or views without a comment",
  );
  const columns = await rows(
    t.catalog,
    "SELECT table_name || '.' || column_name AS name, comment FROM duckdb_columns() WHERE schema_name = 'hx'",
  );
  assert.ok(columns.length > 200, `found ${columns.length} columns`);
  assert.deepEqual(
    columns.filter((r) => !r.comment).map((r) => r.name),
    [],
    "columns without a comment",
  );
});

test("view columns passed through from a table take that column's comment", async () => {
  await using t = await tempCatalog();
  const [row] = await rows(
    t.catalog,
    `SELECT v.comment AS view_comment, s.comment AS table_comment
     FROM duckdb_columns() v, duckdb_columns() s
     WHERE v.schema_name = 'hx' AND v.table_name = 'consumers' AND v.column_name = 'num_pending'
       AND s.schema_name = 'hx' AND s.table_name = 'consumer_stats' AND s.column_name = 'num_pending'`,
  );
  assert.ok(row);
  assert.equal(row.view_comment, row.table_comment);
});

/** The comments of hx.server_stats' and hx.servers' js_reserved_* columns, as `relation.column: comment`. */
const JS_RESERVED_COMMENTS_SQL = `
  SELECT table_name || '.' || column_name AS name, comment FROM duckdb_columns()
  WHERE schema_name = 'hx' AND table_name IN ('server_stats', 'servers') AND column_name LIKE 'js_reserved_%'
  ORDER BY 1`;

/** What the js_reserved_* comments must say: the streams' byte limits on the server, not an account budget. */
function assertReservedByStreams(comments: Record<string, unknown>[]): void {
  assert.deepEqual(
    comments.map((r) => r.name),
    [
      "server_stats.js_reserved_memory",
      "server_stats.js_reserved_storage",
      "servers.js_reserved_memory",
      "servers.js_reserved_storage",
    ],
  );
  for (const { name, comment } of comments) {
    const kind = String(name).endsWith("memory") ? "memory" : "file";
    assert.match(
      String(comment),
      new RegExp(
        `^JetStream (file storage|memory) reserved on this server by the byte limits of the ${kind} streams it holds, bytes: the sum of the max_bytes of their replicas here`,
      ),
      String(name),
    );
    assert.match(String(comment), /account limits do not enter it/, String(name));
    assert.doesNotMatch(String(comment), /reserved by accounts|= unlimited/, String(name));
  }
}

test("js_reserved_memory and js_reserved_storage say they are the streams' byte limits on the server, not accounts'", async () => {
  await using t = await tempCatalog();
  assertReservedByStreams(await rows(t.catalog, JS_RESERVED_COMMENTS_SQL));
});

test("a catalog made before the js_reserved_* comments were reworded takes the new ones when opened", async () => {
  await using dir = await tempDir("natsmon-catalog-");
  const path = join(dir.path, "sys.duckdb");
  const version = MIGRATIONS.findLastIndex((m) =>
    m.sql.includes("COMMENT ON COLUMN hx.server_stats.js_reserved_memory"),
  );
  assert.ok(version > 0, "the migration that rewords the comments");
  const old = await withInstance(path, async (con) => {
    await migrate(con, MIGRATIONS.slice(0, version));
    return (await con.runAndReadAll(JS_RESERVED_COMMENTS_SQL)).getRowsJS().map((r) => r[1] as string);
  });
  assert.equal(old.length, 4);
  for (const comment of old) assert.match(comment, /reserved by accounts/);
  await using catalog = await openCatalog({ path, db: TEST_DB });
  assertReservedByStreams(await rows(catalog, JS_RESERVED_COMMENTS_SQL));
});

test("a catalog with a newer schema than this code knows is refused, not folded into", async () => {
  await using dir = await tempDir("natsmon-catalog-");
  const path = join(dir.path, "sys.duckdb");
  {
    await using _catalog = await openCatalog({ path, db: TEST_DB });
  }
  await withInstance(path, (con) =>
    con.run(`INSERT INTO hx.migrations VALUES (${MIGRATIONS.length + 1}, 'from the future', now())`),
  );
  const known = MIGRATIONS.length;
  await assert.rejects(
    openCatalog({ path, db: TEST_DB }),
    new RegExp(`schema is at version ${known + 1}, newer than this natsmon knows \\(${known}\\)`),
  );
  // The refusal released the file: it opens again once the future migration is gone.
  await withInstance(path, (con) =>
    con.run(`DELETE FROM hx.migrations WHERE version > ${MIGRATIONS.length}`),
  );
  await using _again = await openCatalog({ path, db: TEST_DB });
});

test("a catalog file cannot be opened twice in one process", async () => {
  await using t = await tempCatalog();
  await assert.rejects(openCatalog({ path: t.path, db: TEST_DB }), /already open in this process/);
});

test("a catalog holding rows of every schema version upgrades to the current one keeping each row, and every view reads them", async () => {
  // An upgrade runs each pending migration over tables that hold data, written by whichever
  // release made them: rows written at every version stand in for that, each migration then
  // altering tables that hold rows of all the shapes before it.
  await using dir = await tempDir("natsmon-catalog-");
  const path = join(dir.path, "sys.duckdb");
  /** Rows each table should hold: those written, and any a migration made (the catalog's identity). */
  const expected = new Map<string, number>();
  await withInstance(path, async (con) => {
    for (let version = 1, row = 0; version <= MIGRATIONS.length; version++) {
      await migrate(con, MIGRATIONS.slice(0, version));
      const columns = Map.groupBy(
        await readRows(
          con,
          `SELECT schema_name || '.' || table_name AS name, column_name, data_type FROM duckdb_columns()
           WHERE schema_name IN ('hx', 'main') ORDER BY column_index`,
        ),
        (c) => String(c.name),
      );
      for (const { name, n } of await tableRows(con)) {
        assert.ok(n >= (expected.get(name) ?? 0), `migration ${version} kept the rows of ${name}`);
        const shape = columns.get(name) ?? [];
        const values = [++row, ++row].map(
          (i) => `(${shape.map((c) => sampleValue(String(c.data_type), i)).join(", ")})`,
        );
        const names = shape.map((c) => `"${String(c.column_name)}"`);
        await con.run(`INSERT INTO ${name} (${names.join(", ")}) VALUES ${values.join(", ")}`);
        expected.set(name, n + 2);
      }
    }
  });
  await using catalog = await openCatalog({ path, db: TEST_DB });
  const kept = await catalog.withReader(tableRows);
  assert.deepEqual(new Map(kept.map((t) => [t.name, t.n])), expected);
  const views = await rows(
    catalog,
    `SELECT schema_name || '.' || view_name AS name FROM duckdb_views()
     WHERE schema_name IN ('hx', 'main', 'checks', 'contexts') AND NOT internal`,
  );
  assert.ok(
    views.some((v) => v.name === "hx.own_connections"),
    "the views are those of the last migration",
  );
  for (const { name } of views) {
    await assert.doesNotReject(rows(catalog, `SELECT * FROM ${String(name)}`), String(name));
  }
});

/** Every hx and main table (hx.migrations aside), with its row count. */
async function tableRows(
  con: Awaited<ReturnType<DuckDBInstance["connect"]>>,
): Promise<{ name: string; n: number }[]> {
  const tables = await readRows(
    con,
    `SELECT schema_name || '.' || table_name AS name FROM duckdb_tables()
     WHERE schema_name IN ('hx', 'main') AND NOT (schema_name = 'hx' AND table_name = 'migrations')`,
  );
  const counted = await readRows(
    con,
    tables
      .map((t) => `SELECT '${String(t.name)}' AS name, count(*) AS n FROM ${String(t.name)}`)
      .join(" UNION ALL "),
  );
  return counted.map((r) => ({ name: String(r.name), n: Number(r.n) }));
}

async function readRows(
  con: Awaited<ReturnType<DuckDBInstance["connect"]>>,
  sql: string,
): Promise<Record<string, unknown>[]> {
  return (await con.runAndReadAll(sql)).getRowObjectsJS();
}

async function readMigrations(path: string): Promise<unknown[]> {
  return withInstance(path, async (con) =>
    (await con.runAndReadAll("SELECT * FROM hx.migrations ORDER BY version")).getRowsJS(),
  );
}

/** Direct access to a closed catalog file, as another tool would have it. */
async function withInstance<T>(
  path: string,
  fn: (con: Awaited<ReturnType<DuckDBInstance["connect"]>>) => Promise<T>,
): Promise<T> {
  const instance = await DuckDBInstance.create(path);
  const con = await instance.connect();
  try {
    return await fn(con);
  } finally {
    con.closeSync();
    instance.closeSync();
  }
}
