/**
 * Migration 38: hx.connection_stats gains `opts_epoch`, filled for the rows already there
 * with the hx.connection_opts row in force, and hx.connections joins it by equality. A
 * catalog at migration 37 with configurations that change between epochs must show the
 * same rows in every view after it, and a filter on epoch known only as the query runs must
 * reach hx.connections' scan, as DuckDB's EXPLAIN ANALYZE counts the rows read.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { MIGRATIONS } from "../../../src/catalog/index.ts";
import { migrate } from "../../../src/catalog/migrations/index.ts";
import { equalityJoin } from "../../../src/catalog/migrations/0038-connection-opts-epoch.ts";
import {
  all,
  assertViewsShowSnapshot,
  ENTITIES,
  EPOCHS,
  OPTS_AT,
  readAtLatest,
  snapshotViews,
  uncommented,
  withFilledCatalogAt,
} from "./view-fixtures.ts";

test("migration 38 names each connection row's configuration, keeps every view's rows, and a filter by subquery reaches hx.connections' scan", async () => {
  await withFilledCatalogAt(37, async (con) => {
    const columnsBefore = await all(
      con,
      "SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = 'hx' AND table_name = 'connections' ORDER BY column_index",
    );
    const before = await snapshotViews(con);
    assert.ok(before.get("connections")! >= EPOCHS * ENTITIES);
    const readBefore = await readAtLatest(con, "connections", "connection_stats");
    assert.ok(readBefore >= EPOCHS * ENTITIES, `hx.connections read ${readBefore} rows before`);

    // A node that stopped after the fill, before the migration was recorded, runs it again.
    await MIGRATIONS[37]!.before!(con, () => undefined);
    const told: number[][] = [];
    const progress: string[] = [];
    assert.deepEqual(
      await migrate(con, MIGRATIONS.slice(0, 38), {
        starting: (pending) => told.push(pending.map((m) => m.version)),
        progress: (m, what, done, total) => progress.push(`${m.version} ${what} ${done}/${total}`),
      }),
      [38],
    );
    assert.deepEqual(told, [[38]], "told what it would apply before it did");
    assert.deepEqual(progress, [
      "38 hx.connection_stats.opts_epoch 0/1",
      "38 hx.connection_stats.opts_epoch 1/1",
    ]);
    assert.deepEqual(
      await migrate(con, MIGRATIONS.slice(0, 38), { starting: () => assert.fail("nothing pending") }),
      [],
    );

    await assertViewsShowSnapshot(con, before);
    // Entity 1's configuration changed at epochs 0, 2 and 3, entity 2's at 1; entity 3 has none.
    const named = await all(
      con,
      "SELECT connection_pk AS pk, minute(epoch) AS e, minute(opts_epoch) AS o FROM hx.connection_stats ORDER BY ALL",
    );
    assert.equal(named.length, ENTITIES * EPOCHS);
    for (const r of named) {
      const inForce = OPTS_AT[Number(r.pk)]!.filter((at) => at <= Number(r.e)).at(-1);
      assert.equal(
        r.o === null ? null : Number(r.o),
        inForce ?? null,
        `connection ${Number(r.pk)} at ${Number(r.e)}`,
      );
    }
    const read = await readAtLatest(con, "connections", "connection_stats");
    assert.ok(read <= ENTITIES, `hx.connections read ${read} rows at the latest epoch, one epoch's at most`);
    const asof = await all(
      con,
      "SELECT view_name FROM duckdb_views() WHERE schema_name = 'hx' AND sql LIKE '%ASOF%'",
    );
    assert.deepEqual(asof, [], "no view joins by ASOF any more");
    assert.deepEqual(
      await all(
        con,
        "SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = 'hx' AND table_name = 'connections' ORDER BY column_index",
      ),
      columnsBefore,
      "hx.connections has the columns it had",
    );
    assert.deepEqual(await uncommented(con), []);
  });
});

test("the rewrite of hx.connections takes its stored definition in either EXCLUDE order and refuses one it does not know", () => {
  const stored = (exclude: string) =>
    `CREATE VIEW hx.connections AS SELECT s.epoch, o.* EXCLUDE (epoch, connection_pk), s.* EXCLUDE (${exclude}) ` +
    "FROM hx.connection_stats AS s " +
    "ASOF LEFT JOIN hx.connection_opts AS o ON (((o.connection_pk = s.connection_pk) AND (s.epoch >= o.epoch)));";
  for (const exclude of ["epoch, connection_pk", "connection_pk, epoch"]) {
    const rewritten = equalityJoin("connections", stored(exclude));
    assert.doesNotMatch(rewritten, /ASOF/);
    assert.match(
      rewritten,
      /LEFT JOIN hx\.connection_opts AS o ON o\.connection_pk = s\.connection_pk AND o\.epoch = s\.opts_epoch/,
    );
    assert.match(rewritten, new RegExp(`s\\.\\* EXCLUDE \\(${exclude}, opts_epoch\\)`));
    assert.match(
      rewritten,
      /o\.\* EXCLUDE \(epoch, connection_pk\), s\.\*/,
      "the _opts columns as they were",
    );
  }
  assert.equal(
    equalityJoin("servers", "CREATE VIEW hx.servers AS SELECT 1;"),
    "CREATE VIEW hx.servers AS SELECT 1;",
  );
  assert.throws(
    () =>
      equalityJoin("connections", "CREATE VIEW hx.connections AS SELECT * FROM hx.connection_stats AS s;"),
    /expected one ASOF LEFT JOIN hx\.connection_opts/,
  );
});
