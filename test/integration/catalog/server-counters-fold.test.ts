import { test } from "node:test";
import assert from "node:assert/strict";
import { foldEpoch } from "../../../src/catalog/index.ts";
import { editReply, labEpoch, q, tempCatalog } from "./lab-epoch.ts";

const E1 = "2026-11-22T11:02:13.000Z";

test("VARZ stale-connection and stalled-client counters (2.12+) land in hx.servers; older servers read NULL", async () => {
  await using t = await tempCatalog();
  const replies = editReply("varz", "n1", (body) => {
    body.server.ver = "2.12.1";
    Object.assign(body.data, {
      version: "2.12.1",
      stale_connections: 4,
      stale_connection_stats: { clients: 3, routes: 1, gateways: 0, leafs: 0 },
      stalled_clients: 17,
    });
    return body;
  });
  await foldEpoch(t.catalog, labEpoch(E1, 1, replies));
  assert.deepEqual(
    await q(
      t.catalog,
      "SELECT server, version, stale_connections, stalled_clients FROM hx.servers WHERE server IN ('n1', 'n2') ORDER BY server",
    ),
    [
      { server: "n1", version: "2.12.1", stale_connections: 4, stalled_clients: 17 },
      // 2.9 does not report them: unknown, not zero.
      { server: "n2", version: "2.9.10", stale_connections: null, stalled_clients: null },
    ],
  );
});
