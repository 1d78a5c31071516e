/**
 * The contract every registered check keeps (style.md: contract suites): its macro exists in
 * a real catalog and returns the fixed columns then exactly its detail_columns; codes are
 * unique, lower-case and hyphenated; and it has a fixture epoch where it fires and one where
 * it does not.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { runEpochChecks } from "../../../src/catalog/index.ts";
import { CATEGORIES, CHECKS, FIXED_COLUMNS, findingsSelectSql } from "../../../src/checks/index.ts";
import { catalogWith, macroColumns, runFixture } from "./check-harness.ts";
import { FIXTURES } from "./fixtures/index.ts";
import { labReplies } from "../catalog/lab-epoch.ts";

test("check codes are unique, lower-case and hyphenated", () => {
  const codes = CHECKS.map((c) => c.code);
  assert.deepEqual(
    codes.filter((c, i) => codes.indexOf(c) !== i),
    [],
  );
  for (const code of codes) assert.match(code, /^[a-z]+(-[a-z]+)*-[0-9]{3}$/);
});

test("every check's metadata is complete", () => {
  for (const check of CHECKS) {
    assert.ok(check.name && check.description && check.remediation && check.scope, check.code);
    assert.ok(check.category in CATEGORIES, `${check.code}: category ${check.category}`);
    for (const p of check.params) assert.match(p.name, /^p_[a-z0-9_]+$/, `${check.code}: param ${p.name}`);
    assert.equal(
      check.lookbackSeconds !== undefined && check.lookbackSeconds > 0,
      check.optimization,
      `${check.code}: an optimization check, and only one, names its lookback`,
    );
    const names = [...FIXED_COLUMNS, ...check.detailColumns].map((c) => c.name);
    assert.deepEqual(
      names.filter((n, i) => names.indexOf(n) !== i),
      [],
      `${check.code}: duplicate columns`,
    );
  }
});

describe("every check's macro in a real catalog", () => {
  let fixture: Awaited<ReturnType<typeof catalogWith>>;
  before(async () => {
    fixture = await catalogWith([labReplies(), labReplies()]);
  });
  after(async () => fixture[Symbol.asyncDispose]());

  test("returns the fixed columns, then exactly its detail_columns", async () => {
    for (const check of CHECKS) {
      const columns = await macroColumns(fixture.catalog, check);
      const expected = [...FIXED_COLUMNS, ...check.detailColumns].map(({ name, type }) => ({ name, type }));
      assert.deepEqual(columns, expected, check.code);
    }
  });

  test("runs through the engine over a lab epoch without failing", async () => {
    const epoch = fixture.epochs.at(-1)!;
    const statements = CHECKS.map((c) => ({ code: c.code, sql: findingsSelectSql(c, {}), disabled: false }));
    const result = await runEpochChecks(fixture.catalog, epoch, statements);
    assert.ok(result, "the epoch is in the catalog");
    assert.deepEqual(result.failed, []);
    assert.equal(result.timings.length, CHECKS.length);
  });
});

describe("every check has a fixture where it fires and one where it does not", () => {
  for (const check of CHECKS) {
    test(`${check.code} (${check.name})`, async () => {
      const fixture = FIXTURES[check.code];
      assert.ok(fixture, `no fixture for ${check.code} in test/integration/checks/fixtures/`);
      const fired = await runFixture(check, fixture.fires(), fixture.params);
      assert.ok(fired.length > 0, `${check.code} did not fire on its fires fixture`);
      for (const name of fixture.firesFor ?? []) {
        assert.ok(
          fired.some((r) => r.entity_name === name),
          `${check.code} did not fire for ${name}; it fired for ${fired.map((r) => String(r.entity_name)).join(", ")}`,
        );
      }
      for (const row of fired) {
        assert.ok(
          ["info", "warning", "critical"].includes(String(row.severity)),
          `${check.code}: severity ${String(row.severity)}`,
        );
        if (check.severity !== "dynamic") assert.equal(row.severity, check.severity, check.code);
      }
      if (check.optimization) {
        // At most one row per entity over the window (checks/check.ts).
        const keys = fired.map((r) => `${String(r.entity_pk)}|${String(r.entity_key)}`);
        assert.deepEqual(
          keys.filter((k, i) => keys.indexOf(k) !== i),
          [],
          `${check.code}: more than one row for an entity over the window`,
        );
      }
      const passed = await runFixture(check, fixture.passes(), fixture.params);
      assert.deepEqual(passed, [], `${check.code} fired on its passes fixture`);
    });
  }
});
