/**
 * hx.gateway_stats carries when each link was last up and to which server (migration 40):
 * the fold carries them from a link's previous row, also after a restart has loaded them from
 * the file, and the migration fills them for rows folded before from the rows before them.
 * Real DuckDB files, the recorded GATEWAYZ of a super-cluster whose cluster west went down.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  foldEpoch,
  MIGRATIONS,
  openCatalog,
  type Catalog,
  type ScrapeReply,
} from "../../../src/catalog/index.ts";
import { migrate } from "../../../src/catalog/migrations/index.ts";
import { tempDir } from "../../harness/temp-dir.ts";
import { fixtureEpochTime } from "../checks/check-harness.ts";
import { CLUSTER_FIXTURES } from "../checks/fixtures/cluster.ts";
import { marker, q, TEST_DB } from "./lab-epoch.ts";

import { all, withFilledCatalogAt } from "./view-fixtures.ts";

test("a lost gateway link's rows say when it was last up and to which server, across a restart", async () => {
  const fixture = CLUSTER_FIXTURES["cluster-007"]!;
  const [up, down, stillDown] = fixture.fires().map((e) => ("replies" in e ? e.replies : e));
  await using dir = await tempDir("natsmon-gateway-last-up-");
  const path = join(dir.path, "g.duckdb");
  const fold = async (catalog: Catalog, i: number, replies: readonly ScrapeReply[]) => {
    const epoch = fixtureEpochTime(i);
    const result = await foldEpoch(catalog, { markerSeq: i + 1, marker: marker(epoch, replies), replies });
    assert.equal(result.status, "folded");
  };
  let catalog = await openCatalog({ path, db: TEST_DB });
  try {
    await fold(catalog, 0, up!);
    await fold(catalog, 1, down!);
    // A restart: the carried values are loaded from the links' latest rows.
    await catalog[Symbol.asyncDispose]();
    catalog = await openCatalog({ path, db: TEST_DB });
    await fold(catalog, 2, stillDown!);
    const rows = await q(
      catalog,
      `SELECT sv.name AS server, s.epoch = (SELECT min(epoch) FROM hx.epochs) AS first, s.connected,
              s.remote_server, s.last_connected_epoch = (SELECT min(epoch) FROM hx.epochs) AS last_up_first,
              s.last_remote_server
       FROM hx.gateway_stats s JOIN hx.gateway_ident i USING (gateway_pk) JOIN hx.server_ident sv ON sv.server_pk = i.server_pk
       WHERE i.direction = 'outbound' AND i.gateway = 'west' AND sv.name = 'n1' ORDER BY s.epoch`,
    );
    assert.equal(rows.length, 3, "n1's link to west at each epoch");
    const [first, second, third] = rows;
    assert.equal(first!.connected, true);
    assert.equal(typeof first!.remote_server, "string");
    for (const r of rows) {
      assert.equal(r.last_up_first, true, "last up at the first epoch");
      assert.equal(r.last_remote_server, first!.remote_server, "to the server it was connected to then");
    }
    assert.deepEqual([second!.connected, third!.connected], [false, false]);
  } finally {
    await catalog[Symbol.asyncDispose]();
  }
});

test("migration 40 fills each gateway row with when its link was last up, from the rows before it", async () => {
  await withFilledCatalogAt(39, async (con) => {
    // Link 1 up at every epoch, link 2 at even minutes only, link 3 never.
    await con.run(
      `UPDATE hx.gateway_stats SET connected = gateway_pk = 1 OR (gateway_pk = 2 AND minute(epoch) % 2 = 0),
              remote_server = 'r' || gateway_pk || '-' || minute(epoch)`,
    );
    assert.deepEqual(await migrate(con, MIGRATIONS.slice(0, 40)), [40]);
    const rows = await all(
      con,
      `SELECT gateway_pk AS pk, minute(epoch) AS e, minute(last_connected_epoch) AS up, last_remote_server AS remote
       FROM hx.gateway_stats ORDER BY ALL`,
    );
    const expected = rows.map((r) => {
      const pk = Number(r.pk);
      const e = Number(r.e);
      const up = pk === 1 ? e : pk === 2 ? e - (e % 2) : null;
      return { pk, e, up, remote: up === null ? null : `r${pk}-${up}` };
    });
    assert.deepEqual(
      rows.map((r) => ({
        pk: Number(r.pk),
        e: Number(r.e),
        up: r.up === null ? null : Number(r.up),
        remote: r.remote,
      })),
      expected,
    );
    assert.ok(expected.some((r) => r.up === null) && expected.some((r) => r.up !== null && r.up !== r.e));
  });
});
