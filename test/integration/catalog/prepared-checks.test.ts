/**
 * The checks' statements are prepared once per connection (catalog/prepared-checks.ts),
 * against a real catalog: checks run after the macros were installed again run the new
 * macros (DuckDB keeps a prepared statement's macros as they were), and a run keeps only the
 * statements it used.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { installCheckMacros, runEpochChecks, type CheckStatement } from "../../../src/catalog/index.ts";
import { PreparedChecks } from "../../../src/catalog/prepared-checks.ts";
import { catalogWith } from "../checks/check-harness.ts";
import { labReplies, tempCatalog } from "./lab-epoch.ts";

/** A check statement over checks.probe, shaped as findingsSelectSql shapes a check's. */
const PROBE: CheckStatement = {
  code: "probe-001",
  disabled: false,
  sql: `SELECT f.epoch, 'probe-001' AS code, 'server' AS entity_type, CAST(f.entity_pk AS BIGINT) AS entity_ref,
       f.entity_key, f.entity_name, f.server, f.severity, '{}' AS detail
FROM checks.probe($1::TIMESTAMPTZ, $2::TIMESTAMPTZ) f`,
};

/**
 * checks.probe: one finding, named `name`. It reads no table: DuckDB prepares a statement
 * again when a table it reads changed in the catalog, and only then.
 */
const probeMacro = (name: string) =>
  `CREATE OR REPLACE MACRO checks.probe(ep_from, ep_to) AS TABLE
SELECT ep_to AS epoch, 1 AS entity_pk, '${name}' AS entity_name, NULL::VARCHAR AS entity_key,
       NULL::VARCHAR AS server, 'info' AS severity`;

test("checks run after the macros were installed again run the new macros, not the ones they were prepared with", async () => {
  await using fixture = await catalogWith([labReplies(), labReplies(), labReplies()]);
  const [e1, e2, e3] = fixture.epochs as [string, string, string];
  const names = async (epoch: string) =>
    (await runEpochChecks(fixture.catalog, epoch, [PROBE]))!.findings.map((f) => f.entityName);

  await installCheckMacros(fixture.catalog, [probeMacro("first")]);
  assert.deepEqual(await names(e1), ["first"]);
  assert.deepEqual(await names(e2), ["first"], "the statement prepared for e1 runs again for e2");
  // DuckDB alone would run the macro the statement was prepared with ("first").
  await installCheckMacros(fixture.catalog, [probeMacro("second")]);
  assert.deepEqual(await names(e3), ["second"]);
});

test("installing the macros forgets the statements prepared with the ones before, which DuckDB would go on running", async () => {
  await using fixture = await catalogWith([labReplies()]);
  const prepareProbe = () =>
    fixture.catalog.withWriter(({ con }) =>
      new PreparedChecks(con).get("SELECT v FROM checks.scaled($1::INTEGER)"),
    );
  const run = async (statement: Awaited<ReturnType<typeof prepareProbe>>) => {
    statement.bind([3]);
    return (await statement.runAndReadAll()).getRowsJS();
  };
  await installCheckMacros(fixture.catalog, [
    "CREATE OR REPLACE MACRO checks.scaled(n) AS TABLE SELECT n * 10 AS v",
  ]);
  const before = await prepareProbe();
  assert.deepEqual(await run(before), [[30]]);
  await installCheckMacros(fixture.catalog, [
    "CREATE OR REPLACE MACRO checks.scaled(n) AS TABLE SELECT n * 100 AS v",
  ]);
  // Run as it was prepared, the statement still multiplies by 10: DuckDB kept the macro it was planned with.
  const after = await prepareProbe();
  assert.notEqual(after, before);
  assert.deepEqual(await run(after), [[300]]);
});

test("a run keeps the statements it used and forgets the others", async () => {
  await using t = await tempCatalog();
  await t.catalog.withWriter(async ({ con }) => {
    const first = new PreparedChecks(con);
    const a = await first.get("SELECT 1 AS a");
    const b = await first.get("SELECT 2 AS b");
    first.keepOnly();

    const second = new PreparedChecks(con);
    assert.equal(await second.get("SELECT 1 AS a"), a);
    second.keepOnly();

    const third = new PreparedChecks(con);
    assert.equal(await third.get("SELECT 1 AS a"), a);
    const b2 = await third.get("SELECT 2 AS b");
    assert.notEqual(b2, b, "a statement one run left out is prepared anew");
    assert.deepEqual((await b2.runAndReadAll()).getRowsJS(), [[2]]);
  });
});
