import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import type { NatsConnection } from "@nats-io/nats-core";
import { systemSubjects } from "../../src/protocol/index.ts";
import { sqlQuery } from "../harness/api-client.ts";
import { runNatsmon } from "../harness/natsmon-process.ts";
import type { tempDir } from "../harness/temp-dir.ts";
import { backupArgs, holdBackupConnection, startLabNode, SYSTEM, type LabNode } from "./backup-fixture.ts";

const subjects = systemSubjects(SYSTEM);

describe("natsmon backup while another backup holds the node's backup connection", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let url: string;
  let nc: NatsConnection;

  const backup = (...args: string[]) => runNatsmon(backupArgs(url, ...args));

  let lab: LabNode | undefined;
  before(async () => {
    // A short db.query-timeout, so that a backup gives up waiting for its turn within the
    // test; the held stream itself is never acknowledged and must outlast the test.
    lab = await startLabNode("natsmon-backup-concurrent-", {
      epochs: 2,
      dbYaml: "query-timeout: 2s, query-stream: {ack-timeout: 120s}",
    });
    ({ dir, url, nc } = lab);
  });

  after(async () => {
    await lab?.[Symbol.asyncDispose]();
  });

  test("a backup that waited db.query-timeout for its turn fails saying another backup runs and what to do", async () => {
    const held = await holdBackupConnection(nc, subjects.dbBackupStream);
    try {
      const run = await backup("--out", join(dir.path, "second.duckdb"));
      assert.equal(run.code, 1, run.stderr);
      assert.match(
        run.stderr,
        /backup failed, no backup written: another backup is running on this node: backups are served one table stream at a time, and this one waited db\.query-timeout \(2000 ms\) for its turn; retry once the other backup has finished/,
      );
      assert.deepEqual(
        (await readdir(dir.path)).filter((n) => n.includes("second")),
        [],
      );
      // Queries have connections of their own: the held backup does not hold them up.
      assert.deepEqual(await sqlQuery(nc, SYSTEM, "SELECT count(*)::INTEGER AS n FROM hx.epochs"), [
        { n: 2 },
      ]);
    } finally {
      await held.release();
    }
    const retried = await backup("--out", join(dir.path, "retried.duckdb"));
    assert.equal(retried.code, 0, retried.stderr);
  });
});
