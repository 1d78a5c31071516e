/**
 * Migration 32 on a catalog made before it, when streams were keyed by the JWT name of their
 * account in operator mode: a stream takes its account's key where exactly one account key
 * ever carried that name (its raft groups too), so its history goes on under the same pk;
 * a name two accounts carried stays as it was; configured accounts (no JWT name) are untouched.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { MIGRATIONS, openCatalog } from "../../../src/catalog/index.ts";
import { migrate } from "../../../src/catalog/migrations/index.ts";
import { tempDir } from "../../harness/temp-dir.ts";
import { rows, TEST_DB } from "./lab-epoch.ts";

const KEY = {
  alpha: "AALPHA0000000000000000000000000000000000000000000000000000",
  renamed: "AREN000000000000000000000000000000000000000000000000000000",
  twin1: "ATWIN100000000000000000000000000000000000000000000000000000",
  twin2: "ATWIN200000000000000000000000000000000000000000000000000000",
};
const T0 = "2026-01-01T00:00:00Z";
const T1 = "2026-01-01T00:01:00Z";

/** What the fold wrote before migration 32: streams under their account's JWT name. */
const BEFORE = `
INSERT INTO hx.account_ident VALUES
  (1, '${KEY.alpha}', '${T0}'), (2, '${KEY.renamed}', '${T0}'), (3, '${KEY.twin1}', '${T0}'),
  (4, '${KEY.twin2}', '${T0}'), (5, 'APP', '${T0}');
INSERT INTO hx.account_opts (account_pk, epoch, name_tag) VALUES
  (1, '${T0}', 'ALPHA'), (2, '${T0}', 'OLD'), (2, '${T1}', 'NEW'), (3, '${T0}', 'TWIN'), (4, '${T0}', 'TWIN'),
  (5, '${T0}', NULL);
INSERT INTO hx.stream_ident VALUES
  (1, '', 'ALPHA', 'ORDERS', '${T0}'),
  (2, '', 'OLD', 'EVENTS', '${T0}'),
  (3, '', 'NEW', 'EVENTS', '${T1}'),
  (4, '', 'TWIN', 'ORDERS', '${T0}'),
  (5, '', 'APP', 'ORDERS', '${T0}');
INSERT INTO hx.raft_group_ident (raft_group_pk, domain, name, kind, account, stream_pk, first_epoch) VALUES
  (1, '', 'S-R3F-alpha', 'stream', 'ALPHA', 1, '${T0}'),
  (2, '', 'S-R3F-app', 'stream', 'APP', 5, '${T0}');`;

test("an operator-mode catalog's streams take their account's key where only one account carried the name", async () => {
  await using dir = await tempDir("natsmon-catalog-");
  const path = join(dir.path, "sys.duckdb");
  const instance = await DuckDBInstance.create(path);
  const con = await instance.connect();
  try {
    await migrate(
      con,
      MIGRATIONS.filter((m) => m.version < 32),
    );
    await con.run(BEFORE);
  } finally {
    con.closeSync();
    instance.closeSync();
  }
  await using catalog = await openCatalog({ path, db: TEST_DB });
  const streams = await rows(
    catalog,
    "SELECT stream_pk, account, name FROM hx.stream_ident ORDER BY stream_pk",
  );
  assert.deepEqual(
    streams.map((r) => [r.stream_pk, r.account, r.name]),
    [
      [1, KEY.alpha, "ORDERS"],
      // Renamed before the upgrade: the stream seen last goes on under the key.
      [2, "OLD", "EVENTS"],
      [3, KEY.renamed, "EVENTS"],
      // Two accounts carried TWIN: which one's stream it was cannot be told.
      [4, "TWIN", "ORDERS"],
      [5, "APP", "ORDERS"],
    ],
  );
  const groups = await rows(catalog, "SELECT raft_group_pk, account FROM hx.raft_group_ident ORDER BY 1");
  assert.deepEqual(
    groups.map((r) => [r.raft_group_pk, r.account]),
    [
      [1, KEY.alpha],
      [2, "APP"],
    ],
  );
});
