/**
 * Migration 39: replica rows carry the leader's figure they are compared with, filled for
 * the rows already there, and hx.stream_replicas and hx.consumer_replicas no longer read
 * the leaders' _stats rows. A catalog at migration 38 with rows in every table must show
 * the same rows in every view after it, and a filter on epoch known only as the query runs
 * must not make the views read every epoch of the leaders' rows, as DuckDB's EXPLAIN
 * ANALYZE counts the rows read.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { MIGRATIONS } from "../../../src/catalog/index.ts";
import { migrate } from "../../../src/catalog/migrations/index.ts";
import {
  figureFromRow,
  LEADER_FIGURES,
} from "../../../src/catalog/migrations/0039-replica-leader-figures.ts";
import {
  all,
  assertViewsShowSnapshot,
  ENTITIES,
  EPOCHS,
  readAtLatest,
  snapshotViews,
  uncommented,
  withFilledCatalogAt,
} from "./view-fixtures.ts";

test("migration 39 gives replica rows their leader's figure, keeps every view's rows, and the views read no leader rows", async () => {
  await withFilledCatalogAt(38, async (con) => {
    const columns = (view: string) =>
      all(
        con,
        `SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = 'hx' AND table_name = '${view}' ORDER BY column_index`,
      );
    const columnsBefore = new Map<string, unknown>();
    for (const f of LEADER_FIGURES) {
      columnsBefore.set(f.view, await columns(f.view));
      const read = await readAtLatest(con, f.view, f.leader);
      assert.ok(read >= EPOCHS * ENTITIES, `hx.${f.view} read ${read} rows of hx.${f.leader} before`);
    }
    const before = await snapshotViews(con);

    // A node that stopped after the fill, before the migration was recorded, runs it again.
    await MIGRATIONS[38]!.before!(con, () => undefined);
    assert.deepEqual(await migrate(con, MIGRATIONS.slice(0, 39)), [39]);

    await assertViewsShowSnapshot(con, before);
    for (const f of LEADER_FIGURES) {
      assert.ok(before.get(f.view)! >= EPOCHS * ENTITIES, `hx.${f.view} had rows to compare`);
      const [carried] = await all(
        con,
        `SELECT count(*) AS n, count(*) FILTER (WHERE s.${f.column} IS DISTINCT FROM l.${f.figure}) AS differ,
                count(s.${f.column}) AS filled
         FROM hx.${f.stats} s JOIN hx.${f.ident} i USING (${f.pk})
         LEFT JOIN hx.${f.leader} l ON l.${f.asset} = i.${f.asset} AND l.epoch = s.epoch`,
      );
      assert.equal(Number(carried!.n), EPOCHS * ENTITIES);
      assert.equal(
        Number(carried!.filled),
        EPOCHS * ENTITIES,
        `every ${f.stats} row has its leader's row here`,
      );
      assert.equal(Number(carried!.differ), 0, `${f.stats}.${f.column} is the leader's ${f.figure}`);
      assert.equal(await readAtLatest(con, f.view, f.leader), 0, `hx.${f.view} reads no hx.${f.leader} row`);
      const read = await readAtLatest(con, f.view, f.stats);
      assert.ok(read <= ENTITIES, `hx.${f.view} read ${read} rows of hx.${f.stats}, one epoch's at most`);
      assert.deepEqual(
        await columns(f.view),
        columnsBefore.get(f.view),
        `hx.${f.view} has the columns it had`,
      );
    }
    assert.deepEqual(await uncommented(con), []);
  });
});

test("the rewrite of a replica view takes its stored definition in either EXCLUDE order and refuses one it does not know", () => {
  const stored = (exclude: string) =>
    `CREATE VIEW hx.stream_replicas AS SELECT s.epoch, s.* EXCLUDE (${exclude}), (ls.last_seq - s.last_seq) AS behind_leader_seq ` +
    "FROM hx.stream_replica_stats AS s INNER JOIN hx.stream_replica_ident AS i ON ((i.stream_replica_pk = s.stream_replica_pk)) " +
    "LEFT JOIN hx.stream_stats AS ls ON (((ls.stream_pk = i.stream_pk) AND (ls.epoch = s.epoch)));";
  for (const exclude of ["epoch, stream_replica_pk", "stream_replica_pk, epoch"]) {
    const rewritten = figureFromRow("stream_replicas", stored(exclude));
    assert.doesNotMatch(rewritten, /stream_stats|\bls\./);
    assert.match(rewritten, /\(s\.leader_last_seq - s\.last_seq\) AS behind_leader_seq/);
    assert.match(rewritten, new RegExp(`s\\.\\* EXCLUDE \\(${exclude}, leader_last_seq\\)`));
  }
  assert.equal(
    figureFromRow("servers", "CREATE VIEW hx.servers AS SELECT 1;"),
    "CREATE VIEW hx.servers AS SELECT 1;",
  );
  assert.throws(
    () =>
      figureFromRow("stream_replicas", stored("epoch").replace("AS behind_leader_seq", ", ls.messages AS m")),
    /read elsewhere too/,
  );
  assert.throws(
    () => figureFromRow("consumer_replicas", stored("epoch")),
    /expected one LEFT JOIN hx\.consumer_stats/,
  );
});
