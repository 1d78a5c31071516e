/**
 * Migration 0011: the meta leader's per-peer view, and every server's meta API queue and
 * last meta snapshot, on hx.meta_stats.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { editReply, q } from "./lab-epoch.ts";
import { folded, jszReplies } from "./replication-epoch.ts";

test("meta peers: the leader's row lists its peers and how it sees each; other rows have none", async () => {
  await using t = await folded(jszReplies("jsz_meta_no_quorum_6s.json"));
  assert.deepEqual(
    await q(
      t.catalog,
      `SELECT sv.name AS server, peer_names, peer_offline, peer_current, peer_active_ns, peer_lag
       FROM hx.meta_stats m JOIN hx.server_ident sv USING (server_pk) ORDER BY server`,
    ),
    [
      {
        server: "n1",
        peer_names: ["n2", "n3", "w1", "w2"],
        peer_offline: [false, true, true, true],
        peer_current: [true, true, false, false],
        peer_active_ns: [13370510, 7013529871, 14013322612, 14013764800],
        peer_lag: [0, 0, 0, 0],
      },
      {
        server: "n2",
        peer_names: null,
        peer_offline: null,
        peer_current: null,
        peer_active_ns: null,
        peer_lag: null,
      },
    ],
  );
});

test("meta pending and snapshot figures are kept per server; NULL where 2.9.10 has none", async () => {
  // 2.11.11 adds meta_cluster.snapshot and 2.10.21 meta_cluster.pending to every server's
  // JSZ (MetaClusterInfo); the lab's 2.9.10 replies are edited to carry them.
  const replies = editReply("jsz", "n2", (body) => {
    Object.assign(body.data.meta_cluster as object, {
      pending: 7,
      snapshot: {
        pending_entries: 12,
        pending_size: 3400,
        last_time: "2026-11-22T11:01:00.123456789Z",
        last_duration: 6_500_000_000,
      },
    });
    return body;
  });
  await using t = await folded(replies);
  assert.deepEqual(
    await q(
      t.catalog,
      `SELECT sv.name AS server, pending, snapshot_pending_entries, snapshot_pending_size,
              snapshot_last_time::VARCHAR AS last_time, snapshot_last_duration_ns
       FROM hx.meta_stats m JOIN hx.server_ident sv USING (server_pk) WHERE sv.name IN ('n1', 'n2') ORDER BY server`,
    ),
    [
      {
        server: "n1",
        pending: null,
        snapshot_pending_entries: null,
        snapshot_pending_size: null,
        last_time: null,
        snapshot_last_duration_ns: null,
      },
      {
        server: "n2",
        pending: 7,
        snapshot_pending_entries: 12,
        snapshot_pending_size: 3400,
        last_time: "2026-11-22 11:01:00.123456+00",
        snapshot_last_duration_ns: 6500000000,
      },
    ],
  );
});
