import { test } from "node:test";
import assert from "node:assert/strict";
import { DuckDBTimestampTZValue } from "@duckdb/node-api";
import { foldEpoch } from "../../../src/catalog/index.ts";
import { count, labEpoch, LAB_SERVERS, q, tempCatalog } from "./lab-epoch.ts";

const E1 = "2026-11-22T11:02:13.000Z";

test("a fold that fails part-way leaves no rows behind and the key cache as committed", async () => {
  await using t = await tempCatalog();
  // A stream pk taken behind the cache's back: the fold's stream_ident append collides with
  // it after server_ident rows were already appended in the same transaction.
  await t.catalog.withWriter(({ con }) =>
    con.run("INSERT INTO hx.stream_ident VALUES (1, 'other', 'X', 'Y', now())").then(() => undefined),
  );
  await assert.rejects(foldEpoch(t.catalog, labEpoch(E1, 10)), /primary key|PRIMARY KEY|[Dd]uplicate key/);
  for (const table of [
    "epochs",
    "server_ident",
    "server_opts",
    "server_stats",
    "consumer_ident",
    "stream_stats",
  ]) {
    assert.equal(await count(t.catalog, table), 0, table);
  }
  assert.equal(await count(t.catalog, "stream_ident"), 1);

  // The retry folds cleanly: pks continue from what the file holds, servers start at 1.
  assert.equal((await foldEpoch(t.catalog, labEpoch(E1, 10))).status, "folded");
  const servers = await q(t.catalog, "SELECT name, server_pk FROM hx.server_ident ORDER BY server_pk");
  assert.deepEqual(
    servers.map((s) => [s.name, s.server_pk]),
    LAB_SERVERS.map((name, i) => [name, i + 1]),
  );
  const [streams] = await q(
    t.catalog,
    "SELECT min(stream_pk) AS lo, max(stream_pk) AS hi, count(*) AS n FROM hx.stream_ident",
  );
  assert.deepEqual(streams, { lo: 1, hi: 10, n: 10 });
  assert.equal(await count(t.catalog, "stream_stats"), 9);
});

test("appended rows roll back with their transaction, and DuckDB's COMMIT after an error is no proof", async () => {
  await using t = await tempCatalog();
  await t.catalog.withWriter(async ({ con }) => {
    await con.run("BEGIN TRANSACTION");
    const appender = await con.createAppender("server_ident", "hx");
    appender.appendInteger(1);
    appender.appendVarchar("n1");
    appender.appendNull();
    appender.appendTimestampTZ(new DuckDBTimestampTZValue(0n));
    appender.endRow();
    appender.flushSync();
    appender.closeSync();
    await assert.rejects(
      con.run("INSERT INTO hx.server_ident VALUES (1, 'again', NULL, now())"),
      /PRIMARY KEY|duplicate/,
    );
    // The transaction is aborted, yet COMMIT answers success (and rolls back).
    await con.run("COMMIT");
  });
  assert.equal(await count(t.catalog, "server_ident"), 0);
});

test("the instance runs with external access off and in UTC, and folds regardless", async () => {
  await using t = await tempCatalog();
  await foldEpoch(t.catalog, labEpoch(E1, 10));
  const [setting] = await q(
    t.catalog,
    "SELECT current_setting('enable_external_access') AS external, current_setting('TimeZone') AS zone",
  );
  // UTC whatever the host's zone, so date_trunc and ::DATE agree everywhere.
  assert.deepEqual(setting, { external: false, zone: "UTC" });
  assert.equal(await count(t.catalog, "epochs"), 1);
});
