import { test } from "node:test";
import assert from "node:assert/strict";
import {
  backupStatement,
  describeBackupSchema,
  foldEpoch,
  type Catalog,
} from "../../../src/catalog/index.ts";
import { changingLabReplies, marker, rows, tempCatalog } from "./lab-epoch.ts";

const at = (minute: number) => new Date(Date.UTC(2026, 10, 22, 11, minute)).toISOString();

/**
 * Six epochs of every recorded source; connections (CONNZ) only in the first three, and the
 * ORDERS stream's leader reporting a new max_msgs from epoch 4 on.
 */
async function sixEpochs(catalog: Catalog): Promise<void> {
  for (let i = 0; i < 6; i++) {
    const replies = changingLabReplies(i, { connzUntil: 3, ordersEditFrom: 4 });
    const result = await foldEpoch(catalog, { markerSeq: i + 1, marker: marker(at(i), replies), replies });
    assert.equal(result.status, "folded");
  }
}

async function backupRows(
  catalog: Catalog,
  request: { schema: string; table: string; startEpoch?: string; endEpoch?: string },
): Promise<Record<string, unknown>[]> {
  return catalog.withReader(async (con) => {
    const statement = backupStatement(await describeBackupSchema(con), request);
    return (await con.runAndReadAll(statement.sql, [...statement.params])).getRowObjectsJS();
  });
}

test("the backup set is the base tables of hx without hx.migrations, and main.ips", async () => {
  await using t = await tempCatalog();
  const schema = await t.catalog.withReader((con) => describeBackupSchema(con));
  const names = [...schema.tables.keys()];
  assert.ok(names.includes("hx.epochs") && names.includes("hx.server_stats") && names.includes("main.ips"));
  assert.ok(!names.includes("hx.migrations"), "hx.migrations is left out");
  assert.ok(!names.includes("hx.servers"), "views are left out");
  assert.deepEqual(
    names.filter((n) => !n.startsWith("hx.") && n !== "main.ips"),
    [],
  );
  assert.throws(
    () => backupStatement(schema, { schema: "hx", table: "migrations" }),
    /hx\.migrations is not backed up/,
  );
  assert.throws(
    () => backupStatement(schema, { schema: "hx", table: "servers" }),
    /hx\.servers is not in the backup set/,
  );
  assert.throws(
    () => backupStatement(schema, { schema: "hx", table: "epochs", endEpoch: "2026-11-31T00:00:00Z" }),
    /end_epoch must be an RFC 3339 timestamp/,
  );
  assert.throws(
    () => backupStatement(schema, { schema: "hx", table: "epochs", startEpoch: at(2), endEpoch: at(1) }),
    /is after end_epoch/,
  );
  assert.deepEqual(backupStatement(schema, { schema: "hx", table: "epochs" }), {
    sql: "SELECT * FROM hx.epochs",
    params: [],
  });
  // A table with no epoch column is copied whole whatever the window, with no parameter to bind.
  assert.deepEqual(
    backupStatement(schema, { schema: "main", table: "ips", startEpoch: at(1), endEpoch: at(2) }),
    { sql: "SELECT * FROM main.ips", params: [] },
  );
});

test("a window keeps the epoch rows inside it, the identities they refer to and the options in force", async () => {
  await using t = await tempCatalog();
  await sixEpochs(t.catalog);
  const late = { startEpoch: at(3), endEpoch: at(5) };
  const epochs = await backupRows(t.catalog, { schema: "hx", table: "epochs", ...late });
  assert.deepEqual(
    epochs.map((r) => (r.epoch as Date).toISOString()),
    [at(3), at(4), at(5)],
  );
  // Inclusive bounds given with another offset still name the same instants.
  const sameInstants = await backupRows(t.catalog, {
    schema: "hx",
    table: "epochs",
    startEpoch: "2026-11-22T12:03:00+01:00",
    endEpoch: "2026-11-22T11:05:00.000000Z",
  });
  assert.equal(sameInstants.length, 3);
  // No connection after epoch 2: the late window refers to none, the early one to all seen.
  assert.equal((await backupRows(t.catalog, { schema: "hx", table: "connection_ident", ...late })).length, 0);
  assert.equal((await backupRows(t.catalog, { schema: "hx", table: "connection_opts", ...late })).length, 0);
  // main.ips has no epoch column, so the window does not cut it: every address, even those
  // last seen before the window (spec: start_epoch and end_epoch are ignored for it).
  const ips = await rows(t.catalog, "SELECT * FROM main.ips ORDER BY ip");
  assert.ok(ips.length > 0);
  for (const window of [late, { startEpoch: at(3) }, { endEpoch: at(0) }]) {
    const kept = await backupRows(t.catalog, { schema: "main", table: "ips", ...window });
    assert.deepEqual(
      kept.sort((a, b) => (String(a.ip) < String(b.ip) ? -1 : 1)),
      ips,
      JSON.stringify(window),
    );
  }
  const early = { startEpoch: at(0), endEpoch: at(2) };
  const all = await rows(t.catalog, "SELECT connection_pk FROM hx.connection_ident ORDER BY 1");
  assert.ok(all.length > 0);
  assert.deepEqual(
    (await backupRows(t.catalog, { schema: "hx", table: "connection_ident", ...early })).map(
      (r) => r.connection_pk,
    ),
    all.map((r) => r.connection_pk),
  );
  // Servers are referred to by the late window's stats, so all six stay.
  assert.equal((await backupRows(t.catalog, { schema: "hx", table: "server_ident", ...late })).length, 6);

  const ordersOpts = async (window: { startEpoch?: string; endEpoch?: string }) => {
    const orders = (await rows(t.catalog, "SELECT stream_pk FROM hx.stream_ident WHERE name = 'ORDERS'"))[0]!;
    return (await backupRows(t.catalog, { schema: "hx", table: "stream_opts", ...window }))
      .filter((r) => r.stream_pk === orders.stream_pk)
      .map((r) => [(r.epoch as Date).toISOString(), r.max_msgs]);
  };
  // The configuration in force at the start (from epoch 0) and the change at epoch 4.
  assert.deepEqual(await ordersOpts({ startEpoch: at(2), endEpoch: at(5) }), [
    [at(0), 100000n],
    [at(4), 5n],
  ]);
  assert.deepEqual(await ordersOpts({ startEpoch: at(4) }), [[at(4), 5n]]);
  assert.deepEqual(await ordersOpts({ endEpoch: at(3) }), [[at(0), 100000n]]);
});
