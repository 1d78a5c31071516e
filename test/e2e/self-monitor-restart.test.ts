/**
 * natsmon on its embedded default watches its own sink. Restarting it restarts that server,
 * makes new connections and reads its buckets again: nothing of it is a finding (no
 * server-008 for the embedded server, no conn-003 for a start-up probe, no consumer-004 for
 * a consumer a read left behind), before or after the restart.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { sqlQuery } from "../harness/api-client.ts";
import { spawnLocalNode } from "../harness/local-node.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

test("a restart of natsmon on its embedded default raises no finding about its own server", async () => {
  await using dir = await tempDir();
  const run = async () => {
    const { node, nc } = await spawnLocalNode(dir.path);
    try {
      const runs = async () =>
        (await sqlQuery<{ n: number }>(nc, "local", "SELECT count(*) AS n FROM hx.check_runs"))[0]!.n;
      const start = await waitFor(() => runs().catch(() => undefined), { message: "the catalog open" });
      await waitFor(async () => (await runs()) >= start + 3, {
        timeoutMs: 60_000,
        message: "3 more checked epochs",
      });
      return await sqlQuery<{ code: string; entity_name: string }>(
        nc,
        "local",
        "SELECT DISTINCT code, entity_name FROM hx.check_findings WHERE code IN ('server-008', 'conn-003', 'consumer-004') ORDER BY ALL",
      );
    } finally {
      await nc.close();
      await node.kill("SIGTERM");
    }
  };
  assert.deepEqual(await run(), [], "first start");
  assert.deepEqual(await run(), [], "after the restart");
});
