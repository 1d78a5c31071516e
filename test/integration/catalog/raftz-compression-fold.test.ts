/**
 * The RAFTZ figures migration 0023 added (each node's internal queue lengths `ipq_*_len` and
 * write-ahead log size `wal`, 2.10.26+) and stream compression (config `compression`,
 * 2.10.0+): filled from replies shaped as those versions send them (edited lab replies: no
 * captured sample has them), NULL from the lab's own 2.9.10 replies.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { ScrapeReply } from "../../../src/catalog/index.ts";
import { editReply, q, type LabBody } from "./lab-epoch.ts";
import { folded, jszReplies, raftNamedReplies } from "./replication-epoch.ts";

const RAFT_COLUMNS = `raft_ipq_proposal_len, raft_ipq_entry_len, raft_ipq_resp_len, raft_ipq_apply_len,
       raft_wal_messages, raft_wal_bytes`;

const NO_RAFT = {
  raft_ipq_proposal_len: null,
  raft_ipq_entry_len: null,
  raft_ipq_resp_len: null,
  raft_ipq_apply_len: null,
  raft_wal_messages: null,
  raft_wal_bytes: null,
};

/** A RaftzGroup as 2.10.26 sends it (server/monitor.go RaftzGroup), with `more` set. */
function raftzGroup(more: Record<string, unknown>): Record<string, unknown> {
  return {
    id: "S4yB7c1d",
    state: "FOLLOWER",
    size: 3,
    quorum_needed: 2,
    committed: 1012,
    applied: 1012,
    ever_had_leader: true,
    leader: "n2",
    term: 4,
    pterm: 4,
    pindex: 1012,
    ipq_proposal_len: 0,
    ipq_entry_len: 0,
    ipq_resp_len: 0,
    ipq_apply_len: 0,
    wal: {
      messages: 12,
      bytes: 4096,
      first_seq: 1001,
      first_ts: "2026-11-22T11:00:00Z",
      last_seq: 1012,
      last_ts: "2026-11-22T11:02:00Z",
      consumer_count: 0,
    },
    peers: {},
    ...more,
  };
}

/** Each stream's config of every JSZ reply edited by `edit`. */
function editStreams(edit: (config: Record<string, unknown>, name: string) => void, replies: ScrapeReply[]) {
  let edited = replies;
  for (const { server } of replies.filter((r) => r.source === "jsz"))
    edited = editReply(
      "jsz",
      server,
      (body: LabBody) => {
        for (const account of body.data.account_details ?? [])
          for (const s of account.stream_detail ?? []) edit(s.config, s.name);
        return body;
      },
      edited,
    );
  return edited;
}

test("2.10.26 RAFTZ: each node's queue lengths and WAL size land on its replica and meta_stats rows", async () => {
  // ORDERS and its consumer proc named by their raft groups (JSZ `raft`, 2.9.15+) and a RAFTZ
  // reply from n2, leader of ORDERS and follower of proc and of the meta group.
  const replies = raftNamedReplies();
  const data = {
    APP: {
      "S-R3F-orders": raftzGroup({ state: "LEADER", ipq_proposal_len: 1500, ipq_resp_len: 3 }),
      "C-R3F-proc": raftzGroup({ ipq_entry_len: 7, ipq_apply_len: 2, wal: { messages: 0, bytes: 0 } }),
    },
    SYS: {
      _meta_: raftzGroup({
        leader: "n1",
        ipq_apply_len: 40,
        wal: { messages: 88, bytes: 12_884_901_888, first_seq: 1, last_seq: 88 },
      }),
    },
  };
  replies.push({ source: "raftz", server: "n2", body: { server: { name: "n2", ver: "2.10.26" }, data } });
  await using t = await folded(replies);
  assert.deepEqual(
    await q(
      t.catalog,
      `SELECT server, ${RAFT_COLUMNS} FROM hx.stream_replicas WHERE stream = 'ORDERS' ORDER BY server`,
    ),
    [
      { server: "n1", ...NO_RAFT },
      {
        server: "n2",
        raft_ipq_proposal_len: 1500,
        raft_ipq_entry_len: 0,
        raft_ipq_resp_len: 3,
        raft_ipq_apply_len: 0,
        raft_wal_messages: 12,
        raft_wal_bytes: 4096,
      },
      { server: "n3", ...NO_RAFT },
    ],
  );
  assert.deepEqual(
    await q(
      t.catalog,
      `SELECT ${RAFT_COLUMNS} FROM hx.consumer_replicas WHERE consumer = 'proc' AND server = 'n2'`,
    ),
    [
      {
        raft_ipq_proposal_len: 0,
        raft_ipq_entry_len: 7,
        raft_ipq_resp_len: 0,
        raft_ipq_apply_len: 2,
        raft_wal_messages: 0,
        raft_wal_bytes: 0,
      },
    ],
  );
  assert.deepEqual(
    await q(
      t.catalog,
      `SELECT sv.name AS server, ${RAFT_COLUMNS} FROM hx.meta_stats m
       JOIN hx.server_ident sv USING (server_pk) WHERE sv.name IN ('n1', 'n2') ORDER BY server`,
    ),
    [
      { server: "n1", ...NO_RAFT },
      {
        server: "n2",
        raft_ipq_proposal_len: 0,
        raft_ipq_entry_len: 0,
        raft_ipq_resp_len: 0,
        raft_ipq_apply_len: 40,
        raft_wal_messages: 88,
        raft_wal_bytes: 12_884_901_888,
      },
    ],
  );
});

test("2.9.10 has no RAFTZ: the queue and WAL columns are NULL on every replica and meta_stats row", async () => {
  await using t = await folded();
  const nulls = `count(*) AS n, count(raft_ipq_proposal_len) + count(raft_ipq_entry_len) + count(raft_ipq_resp_len)
    + count(raft_ipq_apply_len) + count(raft_wal_messages) + count(raft_wal_bytes) AS filled`;
  for (const table of ["stream_replicas", "consumer_replicas", "meta_stats"]) {
    const [row] = await q(t.catalog, `SELECT ${nulls} FROM hx.${table}`);
    assert.ok((row!.n as number) > 0, `${table} has rows`);
    assert.equal(row!.filled, 0, `${table} has no RAFTZ figures`);
  }
});

test("stream compression: none or s2 from 2.10 configs, NULL from 2.9.10", async () => {
  {
    await using t = await folded();
    assert.deepEqual(await q(t.catalog, "SELECT DISTINCT compression FROM hx.streams"), [
      { compression: null },
    ]);
  }
  const replies = editStreams(
    (config, name) => (config.compression = name === "ORDERS" ? "s2" : "none"),
    jszReplies("jsz.json"),
  );
  await using t = await folded(replies);
  assert.deepEqual(
    await q(
      t.catalog,
      "SELECT stream, compression FROM hx.streams WHERE stream IN ('ORDERS', 'WORKQ', 'EVENTS') ORDER BY stream",
    ),
    [
      { stream: "EVENTS", compression: "none" },
      { stream: "ORDERS", compression: "s2" },
      { stream: "WORKQ", compression: "none" },
    ],
  );
});
