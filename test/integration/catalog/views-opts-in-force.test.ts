/**
 * Migration 37: the views find each entity's configuration in force by range joins on its
 * _opts rows instead of ASOF joins (hx.connections keeps ASOF). A catalog at migration 36 holding rows of every table, with configurations that change
 * between epochs, must show the same rows in every view after it; a filter on epoch known
 * only as the query runs must reach the views' scans, as DuckDB's EXPLAIN ANALYZE counts
 * the rows they read.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { MIGRATIONS } from "../../../src/catalog/index.ts";
import { migrate } from "../../../src/catalog/migrations/index.ts";
import { rangeJoins } from "../../../src/catalog/migrations/0037-views-opts-in-force.ts";
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

/** The view keeping its ASOF join (hx.connection_opts can change every epoch). */
const ASOF_KEPT = ["connections"];

/** Views over a per-epoch table, with that table: what a filter on epoch should bound. */
const BOUNDED: readonly (readonly [string, string])[] = [
  ["consumers", "consumer_stats"],
  ["streams", "stream_stats"],
  ["servers", "server_stats"],
  ["accounts", "account_stats"],
  ["stream_replicas", "stream_replica_stats"],
  ["consumer_replicas", "consumer_replica_stats"],
  ["raft_groups", "raft_group_stats"],
  ["routes", "route_stats"],
  ["closed_connections", "connection_closes"],
];

test("migration 37 keeps every view's rows, and a filter on epoch by subquery reaches their scans", async () => {
  await withFilledCatalogAt(36, async (con) => {
    // hx.gateway_expected shows outbound gateways down while configured: configured from epoch 0, not from 3.
    await con.run("UPDATE hx.gateway_ident SET direction = 'outbound'");
    await con.run("UPDATE hx.gateway_opts SET configured = minute(epoch) < 3");
    const before = await snapshotViews(con);
    const empty = [...before].filter(([, n]) => n === 0).map(([v]) => v);
    assert.deepEqual(empty, ["kv_buckets", "object_stores"], "views with rows to compare");
    const readBefore = new Map<string, number>();
    for (const [view, table] of BOUNDED) readBefore.set(view, await readAtLatest(con, view, table));

    assert.deepEqual(await migrate(con, MIGRATIONS.slice(0, 37)), [37]);

    await assertViewsShowSnapshot(con, before);
    // The configuration each epoch shows: entity 1 changed at epochs 0, 2 and 3, entity 2 at 1, 3 never.
    const shown = await all(
      con,
      `SELECT stream_pk AS pk, minute(epoch) AS e, max_msgs FROM hx.streams ORDER BY ALL`,
    );
    const expected = (pk: number, e: number) => {
      const from = OPTS_AT[pk]!.filter((at) => at <= e).at(-1);
      return from === undefined ? null : BigInt(100 * pk + 10 * from + 7);
    };
    assert.equal(shown.length, ENTITIES * EPOCHS);
    for (const r of shown)
      assert.equal(
        r.max_msgs,
        expected(Number(r.pk), Number(r.e)),
        `stream ${Number(r.pk)} at ${Number(r.e)}`,
      );

    const asof = await all(
      con,
      "SELECT view_name AS v FROM duckdb_views() WHERE schema_name = 'hx' AND sql LIKE '%ASOF%' ORDER BY 1",
    );
    assert.deepEqual(
      asof.map((r) => r.v),
      ASOF_KEPT,
    );
    for (const [view, table] of BOUNDED) {
      const read = await readAtLatest(con, view, table);
      assert.ok(readBefore.get(view)! >= EPOCHS * ENTITIES, `hx.${view} read every epoch of ${table} before`);
      assert.ok(
        read <= ENTITIES,
        `hx.${view} read ${read} rows of ${table} at the latest epoch, one epoch's at most`,
      );
    }
    // The comments the views had are theirs still.
    assert.deepEqual(await uncommented(con), []);
  });
});

test("the rewrite keeps hx.connections' ASOF join on hx.connection_opts and refuses what it would get wrong", () => {
  const opts = (table: string, alias: string, pk: string) =>
    `ASOF LEFT JOIN hx.${table} AS ${alias} ON (((${alias}.${pk} = s.${pk}) AND (s.epoch >= ${alias}.epoch)))`;
  const connections = `CREATE VIEW hx.connections AS SELECT o.* EXCLUDE (connection_pk, epoch) FROM hx.connection_stats AS s ${opts("connection_opts", "o", "connection_pk")};`;
  assert.equal(rangeJoins("connections", connections), connections);
  // A connection closes once: the range join pairs each close with its connection's _opts rows alone.
  assert.doesNotMatch(rangeJoins("closed_connections", connections), /ASOF/);
  const streams = `CREATE VIEW hx.s AS SELECT o.* EXCLUDE (stream_pk, epoch), ao.name_tag FROM hx.stream_stats AS s ${opts("stream_opts", "o", "stream_pk")} ${opts("account_opts", "ao", "account_pk")};`;
  const rewritten = rangeJoins("s", streams);
  assert.doesNotMatch(rewritten, /ASOF/);
  assert.match(rewritten, /o\.\* EXCLUDE \(in_force_until, stream_pk, epoch\)/);
  assert.match(
    rewritten,
    /AS ao ON ao\.account_pk = s\.account_pk AND s\.epoch >= ao\.epoch AND s\.epoch < ao\.in_force_until/,
  );
  assert.throws(
    () =>
      rangeJoins(
        "x",
        `CREATE VIEW hx.x AS SELECT o.* FROM hx.stream_stats AS s ${opts("stream_opts", "o", "stream_pk")};`,
      ),
    /o\.\* without EXCLUDE/,
  );
  assert.throws(
    () => rangeJoins("y", "CREATE VIEW hx.y AS SELECT * FROM hx.a AS s ASOF JOIN hx.b AS b ON s.t >= b.t;"),
    /an ASOF join this migration does not know/,
  );
});
