import { test } from "node:test";
import assert from "node:assert/strict";
import { editReply, q } from "./lab-epoch.ts";
import { folded, jszReplies, raftNamedReplies } from "./replication-epoch.ts";

test("meta: with three of five peers down the leader still leads but has no quorum", async () => {
  await using t = await folded(jszReplies("jsz_meta_no_quorum_6s.json"));
  assert.deepEqual(
    await q(
      t.catalog,
      "SELECT domain, leader, leader_agreed, servers_reporting, peers_offline, quorum, quorum_ok, members FROM hx.meta",
    ),
    [
      {
        domain: "hub",
        leader: "n1",
        leader_agreed: true,
        servers_reporting: 2,
        peers_offline: 3,
        quorum: 3,
        quorum_ok: false,
        members: ["n1", "n2", "n3", "w1", "w2"],
      },
    ],
  );
});

test("meta: servers that disagree on the leader are visible, and no claimed leader means no quorum", async () => {
  // 21 s later n1 has stepped down (no leader) while n2 still names n1 (nats-monitoring.md §0.4).
  await using t = await folded(jszReplies("jsz_meta_no_quorum_21s.json"));
  assert.deepEqual(
    await q(
      t.catalog,
      "SELECT leader, leader_agreed, leaders_seen, servers_disagreeing, leaders_claiming, quorum_ok FROM hx.meta",
    ),
    [
      {
        leader: null,
        leader_agreed: false,
        leaders_seen: ["n1"],
        servers_disagreeing: ["n2"],
        leaders_claiming: 0,
        quorum_ok: false,
      },
    ],
  );
  assert.deepEqual(
    await q(
      t.catalog,
      `SELECT sv.name AS server, m.leader, m.is_leader, m.peers_offline FROM hx.meta_stats m
       JOIN hx.server_ident sv USING (server_pk) ORDER BY server`,
    ),
    [
      { server: "n1", leader: null, is_leader: false, peers_offline: null },
      { server: "n2", leader: "n1", is_leader: false, peers_offline: null },
    ],
  );
});

test("meta: a leader that did not answer is still the leader the others agree on; quorum is unknown", async () => {
  await using t = await folded(editReply("jsz", "n1", () => undefined));
  assert.deepEqual(
    await q(
      t.catalog,
      `SELECT leader, leader_reporting, leader_agreed, servers_disagreeing, servers_reporting, peers_offline, quorum_ok
       FROM hx.meta`,
    ),
    [
      {
        leader: "n1",
        leader_reporting: false,
        leader_agreed: true,
        servers_disagreeing: [],
        servers_reporting: 4,
        peers_offline: null,
        quorum_ok: null,
      },
    ],
  );
});

test("raft groups: 2.9.10 ignores `raft: true`, so only the meta group is named", async () => {
  await using t = await folded(jszReplies("jsz_raft.json"));
  assert.deepEqual(
    await q(
      t.catalog,
      "SELECT domain, raft_group, kind, leader, members, peers, servers_reporting FROM hx.raft_groups",
    ),
    [
      {
        domain: "hub",
        raft_group: "_meta_",
        kind: "meta",
        leader: "n1",
        members: ["n1", "n2", "n3", "w1", "w2"],
        peers: 5,
        servers_reporting: 5,
      },
    ],
  );
});

test("raft groups named by a newer server (stream_raft_group, consumer_raft_groups, RAFTZ) get rows", async () => {
  // What 2.9.15+ adds with `raft: true`, and a RAFTZ reply (2.10.26+, RaftzGroup fields) from
  // n2, written into the recorded 2.9.10 replies: no captured sample has them.
  const replies = raftNamedReplies();
  const data = {
    APP: { "S-R3F-orders": { state: "LEADER", term: 4, committed: 1012, applied: 1012, pindex: 1012 } },
    SYS: {
      _meta_: { state: "FOLLOWER", term: 9, committed: 88, applied: 87, pindex: 88, catching_up: true },
    },
  };
  replies.push({ source: "raftz", server: "n2", body: { server: { name: "n2" }, data } });
  await using t = await folded(replies);
  assert.deepEqual(
    await q(
      t.catalog,
      `SELECT raft_group, kind, account, stream, consumer, leader, members, peers, peers_offline, peers_lagging
       FROM hx.raft_groups ORDER BY raft_group`,
    ),
    [
      {
        raft_group: "C-R3F-proc",
        kind: "consumer",
        account: "APP",
        stream: "ORDERS",
        consumer: "proc",
        leader: "n1",
        members: ["n1", "n2", "n3"],
        peers: 3,
        peers_offline: 1,
        peers_lagging: 0,
      },
      {
        raft_group: "S-R3F-orders",
        kind: "stream",
        account: "APP",
        stream: "ORDERS",
        consumer: null,
        leader: "n2",
        members: ["n1", "n2", "n3"],
        peers: 3,
        peers_offline: 1,
        peers_lagging: 0,
      },
      {
        raft_group: "_meta_",
        kind: "meta",
        account: null,
        stream: null,
        consumer: null,
        leader: "n1",
        members: ["n1", "n2", "n3", "w1", "w2"],
        peers: 5,
        peers_offline: 1,
        peers_lagging: 0,
      },
    ],
  );
  assert.deepEqual(
    await q(
      t.catalog,
      `SELECT server, raft_state, raft_term, raft_committed, raft_applied, raft_catching_up
       FROM hx.stream_replicas WHERE stream = 'ORDERS' ORDER BY server`,
    ),
    [
      {
        server: "n1",
        raft_state: null,
        raft_term: null,
        raft_committed: null,
        raft_applied: null,
        raft_catching_up: null,
      },
      {
        server: "n2",
        raft_state: "LEADER",
        raft_term: 4,
        raft_committed: 1012,
        raft_applied: 1012,
        raft_catching_up: false,
      },
      {
        server: "n3",
        raft_state: null,
        raft_term: null,
        raft_committed: null,
        raft_applied: null,
        raft_catching_up: null,
      },
    ],
  );
  assert.deepEqual(
    await q(
      t.catalog,
      `SELECT raft_state, raft_applied, raft_catching_up FROM hx.meta_stats m
       JOIN hx.server_ident sv USING (server_pk) WHERE sv.name = 'n2'`,
    ),
    [{ raft_state: "FOLLOWER", raft_applied: 87, raft_catching_up: true }],
  );
});
