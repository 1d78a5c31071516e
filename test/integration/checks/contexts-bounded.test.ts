/**
 * The context macros read the window they are asked for, not every epoch the catalog keeps:
 * they are what a finding's panels call, and one entity's whole retention is millions of rows
 * on a large system (a consumer's hour read its whole week: 363 ms on a medium system's
 * catalog, against 13 ms bounded). Each runs over a real catalog, then with older history
 * added (older-history.ts): what it returns must not change, nor grow what it reads.
 * - Given `ep_to` (a bound parameter, as a panel showing a finding's epoch passes it), the
 *   window's bounds are constants, and the scans must keep to them without DuckDB's runtime
 *   filters.
 * - Without it the window ends at the latest epoch, known only as the query runs: the scans
 *   are bounded by DuckDB's runtime filters, which the plan must let reach them.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { installCheckMacros } from "../../../src/catalog/index.ts";
import { contextMacroStatements } from "../../../src/checks/index.ts";
import { catalogWith } from "./check-harness.ts";
import { FIXTURES } from "./fixtures/index.ts";
import { addOlderHistory, grownReads, measured, MORE, SOME, type Measured } from "./older-history.ts";

test("each context macro reads its window, however much older history the catalog holds", async () => {
  // A lab epoch with JetStream: servers, a stream and its consumers; then five more epochs.
  const fixture = FIXTURES["consumer-003"]!.fires();
  await using lab = await catalogWith([
    ...fixture,
    ...Array<(typeof fixture)[number]>(5).fill(fixture.at(-1)!),
  ]);
  await installCheckMacros(lab.catalog, contextMacroStatements());
  const to = lab.epochs.at(-1)!;
  const [ids] = await lab.catalog.withReader(async (con) =>
    (
      await con.runAndReadAll(
        `SELECT c.consumer_pk, c.stream_pk, s.server_pk FROM hx.consumers c JOIN hx.servers s ON s.epoch = c.epoch AND s.server = c.leader
         WHERE c.epoch = $1::TIMESTAMPTZ ORDER BY c.consumer_pk LIMIT 1`,
        [to],
      )
    ).getRowObjectsJS(),
  );
  assert.ok(ids, "the fixture has a consumer with a leader");
  // Four epochs of the fixture's six or more: the window is not the whole fixture either.
  const window = "lookback := INTERVAL 30 SECOND";
  const calls = [
    `contexts.server_history(${Number(ids.server_pk)}, ${window}`,
    `contexts.stream_history(${Number(ids.stream_pk)}, ${window}`,
    `contexts.consumer_history(${Number(ids.consumer_pk)}, ${window}`,
  ];
  const runs = async () => {
    const out: Record<string, Measured> = {};
    for (const call of calls) {
      out[`${call}, ep_to := $1)`] = await measured(
        lab.catalog,
        `SELECT * FROM ${call}, ep_to := $1::TIMESTAMPTZ)`,
        [to],
        { runtimeFilters: false },
      );
      out[`${call})`] = await measured(lab.catalog, `SELECT * FROM ${call})`, [], { runtimeFilters: true });
    }
    return out;
  };
  const found = await runs();
  for (const [call, run] of Object.entries(found)) {
    assert.equal(
      (JSON.parse(run.rows) as unknown[]).length,
      4,
      `${call}: the window's 4 epochs (t-30 s to t, 10 s apart) of the entity`,
    );
  }
  // Much older history first, so that DuckDB plans both measured runs alike.
  await addOlderHistory(lab.catalog, 1, SOME);
  const some = await runs();
  await addOlderHistory(lab.catalog, SOME + 1, MORE);
  const more = await runs();
  const grown: string[] = [];
  for (const call of Object.keys(found)) {
    assert.equal(some[call]!.rows, found[call]!.rows, `${call}: older history changed what it returns`);
    assert.equal(more[call]!.rows, found[call]!.rows, `${call}: older history changed what it returns`);
    if (grownReads(some[call]!, more[call]!).length > 0)
      grown.push(
        `${call}: read ${JSON.stringify(some[call]!.read)}, then ${JSON.stringify(more[call]!.read)}`,
      );
  }
  assert.deepEqual(grown, [], "context macros whose reads grew with the catalog's older history");
});
