/**
 * natsmon backup on a node whose db.query-max-rows is tiny: the cap is for buffered query
 * results, and a backup (its planning included) must not depend on it.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import type { NatsConnection } from "@nats-io/nats-core";
import { sqlQuery } from "../harness/api-client.ts";
import { runNatsmon } from "../harness/natsmon-process.ts";
import type { tempDir } from "../harness/temp-dir.ts";
import { backupArgs, rowCounts, startLabNode, SYSTEM, type LabNode } from "./backup-fixture.ts";

/** Far below the rows of the catalog's metadata (about 1,000 commented columns) and of most tables. */
const QUERY_MAX_ROWS = 10;

describe("natsmon backup of a node with db.query-max-rows 10", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let url: string;
  let nc: NatsConnection;

  let lab: LabNode | undefined;
  before(async () => {
    lab = await startLabNode("natsmon-backup-cap-", {
      epochs: 5,
      dbYaml: `query-max-rows: ${QUERY_MAX_ROWS}`,
    });
    ({ dir, url, nc } = lab);
  });

  after(async () => {
    await lab?.[Symbol.asyncDispose]();
  });

  test("a backup succeeds and restores every table with the node's row counts", async () => {
    // The cap is in force: a buffered result over it is refused.
    await assert.rejects(sqlQuery(nc, SYSTEM, "SELECT * FROM hx.server_stats"), /^Error: 413 /);

    const out = join(dir.path, "capped.duckdb");
    const run = await runNatsmon(backupArgs(url, "--out", out));
    assert.equal(run.code, 0, run.stderr);

    // Asked one row at a time, under the cap.
    const [set] = await sqlQuery<{ names: string[] }>(
      nc,
      SYSTEM,
      `SELECT list(schema_name || '.' || table_name ORDER BY 1) AS names FROM duckdb_tables()
        WHERE database_name = current_database()
          AND ((schema_name = 'hx' AND table_name <> 'migrations') OR (schema_name = 'main' AND table_name = 'ips'))`,
    );
    const onNode = new Map<string, number>();
    for (const table of set!.names) {
      const [row] = await sqlQuery<{ n: number }>(nc, SYSTEM, `SELECT count(*)::INTEGER AS n FROM ${table}`);
      onNode.set(table, row!.n);
    }
    assert.ok(onNode.size > 40, `the backup set has ${onNode.size} tables`);
    assert.ok(
      [...onNode.values()].some((n) => n > QUERY_MAX_ROWS),
      "some table holds more rows than the cap",
    );
    assert.deepEqual(await rowCounts(out), onNode);
  });
});
