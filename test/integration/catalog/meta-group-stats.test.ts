/**
 * hx.meta reads hx.meta_group_stats (migration 41): the fold judges each meta group's figures
 * when it folds the epoch, and the migration fills them for epochs folded before from hx.meta
 * as it stood. hx.meta must show what it showed: after the migration, over a catalog holding
 * the cases the judgement tells apart, and after folds of the lab's recorded meta group
 * faults, against hx.meta's definition of migration 40 over the same rows. A filter on epoch
 * known only as the query runs must reach the table's scan.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { DuckDBInstance } from "@duckdb/node-api";
import { MIGRATIONS } from "../../../src/catalog/index.ts";
import { migrate } from "../../../src/catalog/migrations/index.ts";
import { catalogWith } from "../checks/check-harness.ts";
import { FIXTURES } from "../checks/fixtures/index.ts";
import {
  all,
  assertViewsShowSnapshot,
  ENTITIES,
  epochAt,
  readAtLatest,
  snapshotViews,
  uncommented,
  withFilledCatalogAt,
} from "./view-fixtures.ts";

/** hx.meta's SELECT as migration 40 left it, read from a catalog migrated that far. */
async function metaAt40(): Promise<string> {
  const instance = await DuckDBInstance.create(":memory:");
  const con = await instance.connect();
  try {
    await migrate(con, MIGRATIONS.slice(0, 40));
    const [row] = await all(
      con,
      "SELECT sql FROM duckdb_views() WHERE schema_name = 'hx' AND view_name = 'meta'",
    );
    const sql = String(row!.sql);
    assert.match(sql, /^CREATE VIEW hx\.meta AS /);
    return sql.replace(/^CREATE VIEW hx\.meta AS /, "").replace(/;\s*$/, "");
  } finally {
    con.closeSync();
    instance.closeSync();
  }
}

/**
 * Meta group 1's rows, three servers (v1, v2, v3) at each of the five epochs, one case an
 * epoch: [server, leader it names, says it leads].
 */
const CASES: readonly (readonly (readonly [number, string | null, boolean])[])[] = [
  // 0: v1 leads and every server names it.
  [
    [1, "v1", true],
    [2, "v1", false],
    [3, "v1", false],
  ],
  // 1: the leader did not answer: v2 and v3 name v9; v1 names none.
  [
    [1, null, false],
    [2, "v9", false],
    [3, "v9", false],
  ],
  // 2: an election: v1 and v2 both say they lead.
  [
    [1, "v1", true],
    [2, "v2", true],
    [3, "v1", false],
  ],
  // 3: no leader: the one named answered without claiming it.
  [
    [1, null, false],
    [2, "v3", false],
    [3, "v3", false],
  ],
  // 4: v1 leads, the others name v2.
  [
    [1, "v1", true],
    [2, "v2", false],
    [3, "v2", false],
  ],
];

test("migration 41 keeps hx.meta's rows, and a filter on epoch by subquery reaches its scan", async () => {
  await withFilledCatalogAt(40, async (con) => {
    await con.run("DELETE FROM hx.meta_stats WHERE meta_pk = 1");
    const rows = CASES.flatMap((servers, e) =>
      servers.map(
        ([server, leader, leads]) =>
          `(${epochAt(e)}, 1, ${server}, ${leader === null ? "NULL" : `'${leader}'`}, ${leads}, 3, 2,` +
          ` ${leads ? e % 2 : "NULL"}, ${leads ? 1 : "NULL"}, ${leads ? e % 2 === 0 : "NULL"})`,
      ),
    );
    await con.run(
      `INSERT INTO hx.meta_stats (epoch, meta_pk, server_pk, leader, is_leader, cluster_size, quorum,
                                  peers_offline, peers_lagging, quorum_ok) VALUES ${rows.join(", ")}`,
    );
    const cases = await all(
      con,
      "SELECT minute(epoch) AS e, leader, leader_agreed, leaders_claiming, quorum_ok FROM hx.meta WHERE meta_pk = 1 ORDER BY e",
    );
    assert.deepEqual(
      cases.map((r) => [r.leader, r.leader_agreed, Number(r.leaders_claiming), r.quorum_ok]),
      [
        ["v1", true, 1, true],
        ["v9", false, 0, null],
        ["v1", false, 2, true],
        [null, false, 0, false],
        ["v1", false, 1, true],
      ],
      "the cases the judgement tells apart",
    );
    const before = await snapshotViews(con);
    assert.equal(
      await readAtLatest(con, "meta", "meta_stats"),
      3 * 5 + (ENTITIES - 1) * 5,
      "every epoch's rows",
    );

    assert.deepEqual(await migrate(con, MIGRATIONS.slice(0, 41)), [41]);

    await assertViewsShowSnapshot(con, before);
    assert.equal(await readAtLatest(con, "meta", "meta_group_stats"), ENTITIES, "the latest epoch's groups");
    assert.equal(await readAtLatest(con, "meta", "meta_stats"), 0);
    assert.deepEqual(await uncommented(con), []);
  });
});

test("the fold judges each meta group as hx.meta did, over the lab's recorded meta group faults", async () => {
  const epochs = Object.entries(FIXTURES)
    .filter(([code]) => code.startsWith("meta-"))
    .flatMap(([, fixture]) => [...fixture.fires(), ...fixture.passes()]);
  await using lab = await catalogWith(epochs);
  const old = await metaAt40();
  const [diff] = await lab.catalog.withReader((con) =>
    all(
      con,
      `SELECT (SELECT count(*) FROM hx.meta) AS n,
              (SELECT count(DISTINCT leader) FROM hx.meta) AS leaders,
              (SELECT count(*) FILTER (WHERE NOT leader_agreed) FROM hx.meta) AS disagreeing,
              (SELECT count(*) FROM (SELECT * FROM (${old}) EXCEPT ALL SELECT * FROM hx.meta)) AS gone,
              (SELECT count(*) FROM (SELECT * FROM hx.meta EXCEPT ALL SELECT * FROM (${old}))) AS added`,
    ),
  );
  assert.equal(Number(diff!.n), lab.epochs.length, "one meta group (the hub's) at every epoch");
  assert.ok(
    Number(diff!.leaders) > 1 && Number(diff!.disagreeing) > 0,
    "leaders change, and servers disagree",
  );
  assert.deepEqual(
    [Number(diff!.gone), Number(diff!.added)],
    [0, 0],
    "hx.meta shows what migration 40's showed",
  );
});
