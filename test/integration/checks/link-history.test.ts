/**
 * cluster-007 and leaf-004 name when a link that is down was last up, however long ago.
 * cluster-007 takes it from the link's rows, which the fold carries it in (migration 40).
 * leaf-004 reads a link's whole history only the first time it is judged lost without having
 * been up in the hour before; after that each epoch takes the time from the run before's
 * finding, so a link down for weeks does not make every epoch read the retention. Run through
 * the engine (runEpochChecks stores each epoch's findings) in a real catalog: up, down, down
 * two hours later, down again. Before the last epoch the rows of the epoch it was up are
 * deleted: the last epoch still names that epoch.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { runEpochChecks } from "../../../src/catalog/index.ts";
import { CHECKS, findingsSelectSql } from "../../../src/checks/index.ts";
import { catalogWith, fixtureEpochTime, type FixtureEpoch } from "./check-harness.ts";
import { FIXTURES } from "./fixtures/index.ts";

const TWO_HOURS_MS = 2 * 3_600_000;

/** At `i` fixture steps, plus two hours from the third epoch on. */
function at(i: number): string {
  return new Date(new Date(fixtureEpochTime(i)).getTime() + (i >= 2 ? TWO_HOURS_MS : 0)).toISOString();
}

async function lastUpAcrossTheGap(
  code: string,
  up: FixtureEpoch,
  down: FixtureEpoch,
  table: "gateway_stats" | "leafnode_stats",
): Promise<{ names: string[]; lastUp: string[]; upEpoch: string }> {
  const check = CHECKS.find((c) => c.code === code)!;
  const replies = (e: FixtureEpoch) => ("replies" in e ? e.replies : e);
  const epochs = [up, down, down, down].map((e, i) => ({ replies: replies(e), at: at(i) }));
  await using lab = await catalogWith(epochs);
  const statements = [{ code, sql: findingsSelectSql(check, {}), disabled: false }];
  for (const epoch of lab.epochs.slice(0, 3)) {
    const run = await runEpochChecks(lab.catalog, epoch, statements);
    assert.deepEqual(run?.failed, [], `${code} at ${epoch}`);
  }
  const upEpoch = lab.epochs[0]!;
  await lab.catalog.withWriter(({ con }) =>
    con.run(`DELETE FROM hx.${table} WHERE epoch = $1::TIMESTAMPTZ`, [upEpoch]),
  );
  const last = lab.epochs.at(-1)!;
  const run = await runEpochChecks(lab.catalog, last, statements);
  assert.deepEqual(run?.failed, []);
  const rows = await lab.catalog.withReader(async (con) =>
    (
      await con.runAndReadAll(
        `SELECT entity_name, strftime(CAST(json_extract_string(detail, '$.last_connected_epoch') AS TIMESTAMPTZ), '%Y-%m-%dT%H:%M:%S.%gZ')
         FROM hx.check_findings WHERE epoch = $1::TIMESTAMPTZ AND code = $2 ORDER BY 1`,
        [last, code],
      )
    ).getRowsJS(),
  );
  return {
    names: rows.map((r) => r[0] as string),
    lastUp: rows.map((r) => r[1] as string),
    upEpoch,
  };
}

test("cluster-007 names the epoch a gateway link was last up, after the rows of that epoch are gone", async () => {
  const [up, down] = FIXTURES["cluster-007"]!.fires();
  const found = await lastUpAcrossTheGap("cluster-007", up!, down!, "gateway_stats");
  assert.deepEqual(found.names, ["n1 -> west", "n2 -> west", "n3 -> west"]);
  assert.deepEqual(found.lastUp, [found.upEpoch, found.upEpoch, found.upEpoch]);
});

test("leaf-004 names the epoch a leafnode link was last up, from the run before, after the rows of that epoch are gone", async () => {
  const [up] = FIXTURES["leaf-004"]!.passes();
  const [down] = FIXTURES["leaf-004"]!.fires();
  const found = await lastUpAcrossTheGap("leaf-004", up!, down!, "leafnode_stats");
  assert.deepEqual(found.names, ["l1 -> remote (APP)"]);
  assert.deepEqual(found.lastUp, [found.upEpoch]);
});
