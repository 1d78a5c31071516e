import { test } from "node:test";
import assert from "node:assert/strict";
import { editReply, q, type LabBody } from "./lab-epoch.ts";
import { folded, jszReplies, raftNamedReplies } from "./replication-epoch.ts";

const REPLICA_COLUMNS = "server, answered, is_leader, leader_seen, current, offline, lag";
test("every server's replica of a stream gets a row: the R3 stream three, an R1 stream one", async () => {
  await using t = await folded();
  assert.deepEqual(
    await q(
      t.catalog,
      `SELECT ${REPLICA_COLUMNS}, last_seq, behind_leader_seq FROM hx.stream_replicas WHERE stream = 'ORDERS' ORDER BY server`,
    ),
    [
      {
        server: "n1",
        answered: true,
        is_leader: false,
        leader_seen: "n2",
        current: true,
        offline: false,
        lag: 0,
        last_seq: 1010,
        behind_leader_seq: 0,
      },
      {
        server: "n2",
        answered: true,
        is_leader: true,
        leader_seen: "n2",
        current: true,
        offline: false,
        lag: 0,
        last_seq: 1010,
        behind_leader_seq: 0,
      },
      {
        server: "n3",
        answered: true,
        is_leader: false,
        leader_seen: "n2",
        current: true,
        offline: false,
        lag: 0,
        last_seq: 1010,
        behind_leader_seq: 0,
      },
    ],
  );
  assert.deepEqual(
    await q(t.catalog, `SELECT ${REPLICA_COLUMNS}, messages FROM hx.stream_replicas WHERE stream = 'EVENTS'`),
    [
      {
        server: "n1",
        answered: true,
        is_leader: true,
        leader_seen: "n1",
        current: true,
        offline: false,
        lag: 0,
        messages: 4544,
      },
    ],
  );
  const [{ n }] = (await q(t.catalog, "SELECT count(*) AS n FROM hx.stream_replicas")) as [{ n: number }];
  // 9 streams: ORDERS, WORKQ and KV_config are R3, the other six R1.
  assert.equal(n, 3 * 3 + 6);
});

test("a consumer replica keeps its own copy: a follower's stale ack floor shows against the leader's", async () => {
  await using t = await folded();
  assert.deepEqual(
    await q(
      t.catalog,
      `SELECT server, is_leader, num_ack_pending, ack_floor_stream_seq, behind_leader_ack_floor
       FROM hx.consumer_replicas WHERE consumer = 'proc' ORDER BY server`,
    ),
    [
      {
        server: "n1",
        is_leader: true,
        num_ack_pending: 25,
        ack_floor_stream_seq: 400,
        behind_leader_ack_floor: 0,
      },
      {
        server: "n2",
        is_leader: false,
        num_ack_pending: 0,
        ack_floor_stream_seq: 0,
        behind_leader_ack_floor: 400,
      },
      {
        server: "n3",
        is_leader: false,
        num_ack_pending: 0,
        ack_floor_stream_seq: 400,
        behind_leader_ack_floor: 0,
      },
    ],
  );
});

test("with n3 stopped, its replicas still get rows from the leaders' view: offline, and current stays true", async () => {
  await using t = await folded(jszReplies("jsz_n3_down.json"));
  assert.deepEqual(
    await q(
      t.catalog,
      `SELECT ${REPLICA_COLUMNS}, messages FROM hx.stream_replicas WHERE stream = 'ORDERS' ORDER BY server`,
    ),
    [
      {
        server: "n1",
        answered: true,
        is_leader: false,
        leader_seen: "n2",
        current: true,
        offline: false,
        lag: 0,
        messages: 1010,
      },
      {
        server: "n2",
        answered: true,
        is_leader: true,
        leader_seen: "n2",
        current: true,
        offline: false,
        lag: 0,
        messages: 1010,
      },
      // Only the leader's view: n3 did not answer, so there is no copy of its own.
      {
        server: "n3",
        answered: false,
        is_leader: false,
        leader_seen: null,
        current: true,
        offline: true,
        lag: 0,
        messages: null,
      },
    ],
  );
  // proc is led by n1, which reports n3 offline (and current). Follower n2's stale copy says
  // n3 is not current and 80 behind: not the view that counts.
  assert.deepEqual(
    await q(
      t.catalog,
      `SELECT ${REPLICA_COLUMNS} FROM hx.consumer_replicas WHERE consumer = 'proc' AND server = 'n3'`,
    ),
    [
      {
        server: "n3",
        answered: false,
        is_leader: false,
        leader_seen: null,
        current: true,
        offline: true,
        lag: 0,
      },
    ],
  );
  assert.deepEqual(
    await q(
      t.catalog,
      "SELECT leader, leader_agreed, cluster_size, quorum, peers_offline, quorum_ok FROM hx.meta",
    ),
    [{ leader: "n1", leader_agreed: true, cluster_size: 5, quorum: 3, peers_offline: 1, quorum_ok: true }],
  );
  // The stopped server, named only by the leaders' replies, is a known server.
  assert.deepEqual(await q(t.catalog, "SELECT name, cluster FROM hx.server_ident WHERE name = 'n3'"), [
    { name: "n3", cluster: "east" },
  ]);
});

test("when a stream's leader did not answer, the follower's own copy still has a row, without a leader's view", async () => {
  // leader_only: only the meta leader n1 (and the standalone leaf) answer; ORDERS is led by n2.
  await using t = await folded(jszReplies("jsz_leader_only.json"));
  assert.deepEqual(
    await q(t.catalog, `SELECT ${REPLICA_COLUMNS}, messages FROM hx.stream_replicas WHERE stream = 'ORDERS'`),
    [
      {
        server: "n1",
        answered: true,
        is_leader: false,
        leader_seen: "n2",
        current: null,
        offline: null,
        lag: null,
        messages: 1010,
      },
    ],
  );
});

test("KV buckets are the KV_ streams, named and described as buckets", async () => {
  await using t = await folded();
  assert.deepEqual(
    await q(
      t.catalog,
      "SELECT bucket, stream, leader, replicas, history, ttl_ns, values_stored, bytes FROM hx.kv_buckets ORDER BY bucket",
    ),
    [
      {
        bucket: "config",
        stream: "KV_config",
        leader: "n2",
        replicas: 3,
        history: 5,
        ttl_ns: 0,
        values_stored: 21,
        bytes: 1298,
      },
      {
        bucket: "sessions",
        stream: "KV_sessions",
        leader: "n3",
        replicas: 1,
        history: 1,
        ttl_ns: 3600000000000,
        values_stored: 15,
        bytes: 835,
      },
    ],
  );
  assert.deepEqual(await q(t.catalog, "SELECT * FROM hx.object_stores"), []);
});

test("a stream named OBJ_<bucket> is an object store", async () => {
  const replies = editReply("jsz", "n1", (body) => {
    body.data.account_details[0]!.stream_detail.find((s) => s.name === "EVENTS")!.name = "OBJ_files";
    return body;
  });
  await using t = await folded(replies);
  assert.deepEqual(await q(t.catalog, "SELECT bucket, stream, leader, messages FROM hx.object_stores"), [
    { bucket: "files", stream: "OBJ_files", leader: "n1", messages: 4544 },
  ]);
});

test("in operator mode, raft groups, KV buckets and object stores name the account by its JWT's name beside its key", async () => {
  // JSZ in operator mode: `id` the account's public key, `name` the name in its JWT.
  const replies = raftNamedReplies().map((reply) => {
    const body = structuredClone(reply.body) as LabBody;
    for (const account of body.data.account_details as unknown as Record<string, unknown>[]) {
      Object.assign(account, { id: account.name, name: `jwt-name-of-${String(account.name)}` });
    }
    for (const stream of body.data.account_details.flatMap((a) => a.stream_detail)) {
      if (stream.name === "EVENTS") stream.name = "OBJ_files";
    }
    return { ...reply, body };
  });
  await using t = await folded(replies);
  const names = "SELECT DISTINCT account, account_name FROM";
  assert.deepEqual(await q(t.catalog, `${names} hx.kv_buckets`), [
    { account: "APP", account_name: "jwt-name-of-APP" },
  ]);
  assert.deepEqual(await q(t.catalog, `${names} hx.object_stores`), [
    { account: "APP", account_name: "jwt-name-of-APP" },
  ]);
  assert.deepEqual(await q(t.catalog, `${names} hx.raft_groups ORDER BY ALL`), [
    { account: "APP", account_name: "jwt-name-of-APP" },
    { account: null, account_name: null },
  ]);
});

test("each replica row carries its leader's figure of the epoch, the one the leader's own row holds", async () => {
  await using t = await folded();
  for (const [stats, ident, pk, asset, leader, figure, column] of [
    [
      "stream_replica_stats",
      "stream_replica_ident",
      "stream_replica_pk",
      "stream_pk",
      "stream_stats",
      "last_seq",
      "leader_last_seq",
    ],
    [
      "consumer_replica_stats",
      "consumer_replica_ident",
      "consumer_replica_pk",
      "consumer_pk",
      "consumer_stats",
      "ack_floor_stream_seq",
      "leader_ack_floor_stream_seq",
    ],
  ]) {
    const [counts] = await q(
      t.catalog,
      `SELECT count(*) AS n, count(s.${column}) AS carried,
              count(*) FILTER (WHERE s.${column} IS DISTINCT FROM l.${figure}) AS differ
       FROM hx.${stats} s JOIN hx.${ident} i USING (${pk})
       LEFT JOIN hx.${leader} l ON l.${asset} = i.${asset} AND l.epoch = s.epoch`,
    );
    assert.ok(Number(counts!.n) > 0, `${stats} has rows`);
    assert.equal(counts!.carried, counts!.n, `every ${stats} row has a trusted leader here`);
    assert.equal(counts!.differ, 0, `${stats}.${column} is ${leader}.${figure}`);
  }
});
