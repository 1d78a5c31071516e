import { test } from "node:test";
import assert from "node:assert/strict";
import { foldEpoch, openCatalog, type ScrapeReply } from "../../../src/catalog/index.ts";
import { count, editReply, labEpoch, labReplies, LAB_SERVERS, q, tempCatalog, TEST_DB } from "./lab-epoch.ts";

const E1 = "2026-11-22T11:02:13.000Z";
const E2 = "2026-11-22T11:03:13.000Z";
const E3 = "2026-11-22T11:04:13.000Z";

test("the lab's 2.9.10 epoch lands 6 servers, 9 streams and 6 consumers, one row each", async () => {
  await using t = await tempCatalog();
  const result = await foldEpoch(t.catalog, labEpoch(E1, 10));
  assert.equal(result.status, "folded");
  const [epoch] = await q(t.catalog, "SELECT * FROM hx.epochs");
  assert.deepEqual(epoch?.errors, []);
  assert.equal(epoch?.epoch, E1);
  assert.equal(epoch?.marker_seq, 10);
  assert.equal(epoch?.parts, 18);
  assert.deepEqual(epoch?.servers_answered, LAB_SERVERS);
  assert.equal(result.status === "folded" && result.rows, (epoch?.rows as number) + 1);
  // Each phase was timed, and together they fit in the fold's time.
  assert.ok(result.status === "folded");
  const { build, fill, append, commit } = result.phases;
  const phases = [build, fill, append, commit];
  assert.ok(phases.every((ms) => ms >= 0));
  assert.ok(phases.reduce((a, b) => a + b, 0) <= result.ms);

  assert.deepEqual(
    await q(t.catalog, "SELECT server, cluster, meta_leader, healthz_status FROM hx.servers ORDER BY server"),
    [
      { server: "l1", cluster: "l1", meta_leader: null, healthz_status: "ok" },
      { server: "n1", cluster: "east", meta_leader: "n1", healthz_status: "ok" },
      { server: "n2", cluster: "east", meta_leader: "n1", healthz_status: "ok" },
      { server: "n3", cluster: "east", meta_leader: "n1", healthz_status: "ok" },
      { server: "w1", cluster: "west", meta_leader: "n1", healthz_status: "ok" },
      { server: "w2", cluster: "west", meta_leader: "n1", healthz_status: "ok" },
    ],
  );
  const [n1] = await q(
    t.catalog,
    "SELECT connections, in_bytes, js_streams, server_id FROM hx.servers WHERE server = 'n1'",
  );
  assert.deepEqual(n1, {
    connections: 6,
    in_bytes: 359408931,
    js_streams: 4,
    server_id: "NBO3CUQLAGINNZOAJ3C4RFN5Y7NGAWJXRFLGJSU2UQ5YIVXIQMBZAJGY",
  });
  assert.deepEqual(
    await q(
      t.catalog,
      "SELECT domain, account, stream, leader, replicas, messages FROM hx.streams ORDER BY stream",
    ),
    [
      { domain: "hub", account: "APP", stream: "ALL_SOURCED", leader: "n2", replicas: 1, messages: 4664 },
      { domain: "hub", account: "APP", stream: "EVENTS", leader: "n1", replicas: 1, messages: 4544 },
      { domain: "hub", account: "APP", stream: "KV_config", leader: "n2", replicas: 3, messages: 21 },
      { domain: "hub", account: "APP", stream: "KV_sessions", leader: "n3", replicas: 1, messages: 15 },
      { domain: "leaf", account: "APP", stream: "LEAF_EVENTS", leader: "l1", replicas: 1, messages: 30 },
      { domain: "hub", account: "APP", stream: "ORDERS", leader: "n2", replicas: 3, messages: 1010 },
      { domain: "hub", account: "APP", stream: "ORDERS_MIRROR", leader: "w2", replicas: 1, messages: 1010 },
      { domain: "hub", account: "APP", stream: "WESTLOG", leader: "w1", replicas: 1, messages: 120 },
      { domain: "hub", account: "APP", stream: "WORKQ", leader: "n1", replicas: 3, messages: 40 },
    ],
  );
  // Followers said proc had 0 acks pending and push_orphan was bound; their leaders say otherwise.
  assert.deepEqual(
    await q(
      t.catalog,
      "SELECT stream, consumer, leader, num_ack_pending, num_pending, push_bound FROM hx.consumers ORDER BY stream, consumer",
    ),
    [
      {
        stream: "EVENTS",
        consumer: "ev",
        leader: "n1",
        num_ack_pending: 0,
        num_pending: 4544,
        push_bound: null,
      },
      {
        stream: "ORDERS",
        consumer: "laggard",
        leader: "n1",
        num_ack_pending: 0,
        num_pending: 1010,
        push_bound: null,
      },
      {
        stream: "ORDERS",
        consumer: "proc",
        leader: "n1",
        num_ack_pending: 25,
        num_pending: 585,
        push_bound: null,
      },
      {
        stream: "ORDERS",
        consumer: "push1",
        leader: "n1",
        num_ack_pending: 0,
        num_pending: 0,
        push_bound: true,
      },
      {
        stream: "ORDERS",
        consumer: "push_orphan",
        leader: "n2",
        num_ack_pending: 0,
        num_pending: 1010,
        push_bound: false,
      },
      {
        stream: "WORKQ",
        consumer: "workers",
        leader: "n1",
        num_ack_pending: 3,
        num_pending: 37,
        push_bound: null,
      },
    ],
  );
  for (const [table, n] of [
    ["server_ident", 6],
    ["server_opts", 6],
    ["stream_ident", 9],
    ["stream_opts", 9],
    ["consumer_ident", 6],
    ["consumer_opts", 6],
  ] as const) {
    assert.equal(await count(t.catalog, table), n, table);
  }
});

test("values keep their precision: nanosecond times to the microsecond, configured peers as lists", async () => {
  await using t = await tempCatalog();
  await foldEpoch(t.catalog, labEpoch(E1, 10));
  const [proc] = await q(t.catalog, "SELECT last_active, created FROM hx.consumers WHERE consumer = 'proc'");
  assert.equal(proc?.last_active, "2026-11-22T10:48:02.326379Z");
  assert.equal(proc?.created, "2026-11-22T10:47:58.843412Z");
  const [n1] = await q(t.catalog, "SELECT cluster_urls, gateways, start FROM hx.servers WHERE server = 'n1'");
  assert.deepEqual(n1?.cluster_urls, ["127.0.0.1:6221", "127.0.0.1:6222", "127.0.0.1:6223"]);
  assert.deepEqual(n1?.gateways, ["west"]);
  assert.equal(n1?.start, "2026-11-22T10:46:46.445934Z");
  const [l1] = await q(
    t.catalog,
    "SELECT leaf_remote_accounts, js_domain FROM hx.servers WHERE server = 'l1'",
  );
  assert.deepEqual(l1, { leaf_remote_accounts: ["APP", "SYS"], js_domain: "leaf" });
});

test("numbers beyond 2^53 are stored exactly; a value that fits no column is recorded and stored NULL", async () => {
  await using t = await tempCatalog();
  const replies = editReply("jsz", "n1", (body) => {
    body.data.reserved_memory = 2n ** 64n - 1n; // "unlimited", UBIGINT column
    body.data.messages = 2n ** 62n + 1n; // BIGINT column, beyond 2^53
    body.data.api.total = 2n ** 64n - 1n; // does not fit BIGINT
    return body;
  });
  await foldEpoch(t.catalog, labEpoch(E1, 10, replies));
  const [n1] = await q(
    t.catalog,
    "SELECT js_reserved_memory, js_messages, js_api_total FROM hx.servers WHERE server = 'n1'",
  );
  assert.deepEqual(n1, {
    js_reserved_memory: "18446744073709551615",
    js_messages: "4611686018427387905",
    js_api_total: null,
  });
  const [epoch] = await q(t.catalog, "SELECT errors FROM hx.epochs");
  assert.deepEqual(epoch?.errors, [
    "server n1: hx.server_stats.js_api_total: 18446744073709551615 is not a BIGINT; stored NULL",
  ]);
});

test("a redelivered marker, or another marker for a folded epoch, is skipped and counts nothing twice", async () => {
  await using t = await tempCatalog();
  assert.equal((await foldEpoch(t.catalog, labEpoch(E1, 10))).status, "folded");
  const before = await count(t.catalog, "server_stats");
  for (const [epoch, seq] of [
    [E1, 10],
    [E1, 11],
  ] as const) {
    assert.deepEqual(await foldEpoch(t.catalog, labEpoch(epoch, seq)), {
      status: "skipped",
      reason: "already-folded",
    });
  }
  assert.equal(await count(t.catalog, "server_stats"), before);
  assert.equal(await count(t.catalog, "epochs"), 1);
  assert.equal((await foldEpoch(t.catalog, labEpoch(E2, 11))).status, "folded");
  assert.equal(await count(t.catalog, "server_stats"), before * 2);
});

test("a new epoch whose marker has a sequence already folded (the scrape stream created again) is folded, ordered after the others", async () => {
  await using t = await tempCatalog();
  assert.equal((await foldEpoch(t.catalog, labEpoch(E1, 10))).status, "folded");
  assert.equal((await foldEpoch(t.catalog, labEpoch(E2, 11))).status, "folded");
  // The stream starts again at 1: its 11th marker has the sequence E2's marker had.
  assert.equal((await foldEpoch(t.catalog, labEpoch(E3, 11))).status, "folded");
  assert.deepEqual(await foldEpoch(t.catalog, labEpoch(E3, 11)), {
    status: "skipped",
    reason: "already-folded",
  });
  assert.deepEqual(await q(t.catalog, "SELECT epoch, marker_seq FROM hx.epochs ORDER BY epoch"), [
    { epoch: E1, marker_seq: 10 },
    { epoch: E2, marker_seq: 11 },
    { epoch: E3, marker_seq: 12 },
  ]);
});

test("_opts rows are written once, again only when the leader's configuration changes, also across restarts", async () => {
  await using t = await tempCatalog();
  await foldEpoch(t.catalog, labEpoch(E1, 10));
  await foldEpoch(t.catalog, labEpoch(E2, 11));
  assert.equal(await count(t.catalog, "stream_opts"), 9);
  assert.equal(await count(t.catalog, "server_opts"), 6);
  assert.equal(await count(t.catalog, "consumer_opts"), 6);

  const ordersLimit = (limit: number, server: string, replies?: ScrapeReply[]) =>
    editReply(
      "jsz",
      server,
      (body) => {
        for (const s of body.data.account_details[0]!.stream_detail)
          if (s.name === "ORDERS") s.config.max_msgs = limit;
        return body;
      },
      replies,
    );
  // A follower's copy of the configuration is not the leader's: nothing changes.
  await foldEpoch(t.catalog, labEpoch(E3, 12, ordersLimit(5, "n1")));
  assert.equal(await count(t.catalog, "stream_opts"), 9);
  // The leader (n2) reports a new limit: one new row, valid from that epoch.
  const changed = ordersLimit(5, "n2", ordersLimit(5, "n1"));
  await foldEpoch(t.catalog, labEpoch("2026-11-22T11:05:13.000Z", 13, changed));
  assert.equal(await count(t.catalog, "stream_opts"), 10);
  assert.deepEqual(
    (await q(t.catalog, "SELECT epoch, max_msgs FROM hx.streams WHERE stream = 'ORDERS' ORDER BY epoch")).map(
      (r) => r.max_msgs,
    ),
    [100000, 100000, 100000, 5],
  );

  // After a restart the latest configuration is still known: the same config writes nothing.
  await t.catalog[Symbol.asyncDispose]();
  await using reopened = await openCatalog({ path: t.path, db: TEST_DB });
  await foldEpoch(reopened, labEpoch("2026-11-22T11:06:13.000Z", 14, changed));
  assert.equal(await count(reopened, "stream_opts"), 10);
  assert.equal(await count(reopened, "server_opts"), 6);
  assert.equal(await count(reopened, "consumer_opts"), 6);
  assert.equal(await count(reopened, "epochs"), 5);
});

test("error replies and unreadable bodies are recorded in hx.epochs.errors and the rest of the epoch folds", async () => {
  await using t = await tempCatalog();
  let replies = editReply("varz", "n3", (body) => ({
    server: body.server,
    error: { code: 500, description: "boom" },
  }));
  replies = editReply(
    "jsz",
    "n2",
    () => ({ error: { code: 0, description: "scrape part is not valid JSON" } }),
    replies,
  );
  const input = labEpoch(E1, 10, replies);
  input.marker.errors.push({ source: "connz", error: "timeout" });
  input.marker.finished_at = "soon";
  await foldEpoch(t.catalog, input);
  const [epoch] = await q(t.catalog, "SELECT errors, finished_at FROM hx.epochs");
  assert.deepEqual(epoch, {
    finished_at: null,
    errors: [
      "connz: timeout",
      "varz from n3: error 500 boom",
      "jsz from n2: error 0 scrape part is not valid JSON",
      'commit marker 10: hx.epochs.finished_at: "soon" is not a TIMESTAMP WITH TIME ZONE; stored NULL',
    ],
  });
  // n3 is there from JSZ and HEALTHZ, without VARZ figures.
  const [n3] = await q(
    t.catalog,
    "SELECT sources, version, connections, js_streams FROM hx.servers WHERE server = 'n3'",
  );
  assert.deepEqual(n3, { sources: ["jsz", "healthz"], version: null, connections: null, js_streams: 4 });
  // n2 led ORDERS and KV_config: their state is not trusted from anyone else.
  const streams = await q(t.catalog, "SELECT stream FROM hx.streams ORDER BY stream");
  assert.deepEqual(
    streams.map((s) => s.stream),
    ["EVENTS", "KV_sessions", "LEAF_EVENTS", "ORDERS_MIRROR", "WESTLOG", "WORKQ"],
  );
  assert.equal(await count(t.catalog, "stream_ident"), 8, "ALL_SOURCED was only on n2; the others are known");
});

test("the servers asked again directly after a broadcast are named in hx.epochs.asked_again, and only there", async () => {
  await using t = await tempCatalog();
  await foldEpoch(t.catalog, labEpoch(E1, 10));
  const input = labEpoch(E2, 11);
  input.marker.asked_again = [
    { source: "jsz", servers: ["n2"] },
    { source: "varz", servers: ["n2", "n3"] },
  ];
  await foldEpoch(t.catalog, input);
  assert.deepEqual(
    await q(t.catalog, "SELECT asked_again, errors, servers_partial FROM hx.epochs ORDER BY epoch"),
    [
      { asked_again: [], errors: [], servers_partial: [] },
      { asked_again: ["jsz: n2", "varz: n2, n3"], errors: [], servers_partial: [] },
    ],
  );
});

test("servers that did not answer are absent from that epoch's stats, not gone", async () => {
  await using t = await tempCatalog();
  await foldEpoch(t.catalog, labEpoch(E1, 10));
  const eastOnly = labReplies().filter((r) => !r.server.startsWith("w"));
  await foldEpoch(t.catalog, labEpoch(E2, 11, eastOnly));
  const [e2] = await q(
    t.catalog,
    `SELECT servers_expected, servers_answered FROM hx.epochs WHERE epoch = '${E2}'`,
  );
  assert.deepEqual(e2, { servers_expected: LAB_SERVERS, servers_answered: ["l1", "n1", "n2", "n3"] });
  const perEpoch = await q(
    t.catalog,
    "SELECT epoch, count(*) AS servers FROM hx.server_stats GROUP BY epoch ORDER BY epoch",
  );
  assert.deepEqual(perEpoch, [
    { epoch: E1, servers: 6 },
    { epoch: E2, servers: 4 },
  ]);
  const west = await q(t.catalog, `SELECT stream FROM hx.streams WHERE epoch = '${E2}' AND leader LIKE 'w%'`);
  assert.deepEqual(west, []);
  assert.equal(await count(t.catalog, "server_ident"), 6);
  assert.equal(await count(t.catalog, "stream_ident"), 9);
});

test("HEALTHZ details (2.10+) and the js-server-only check land in hx.servers", async () => {
  await using t = await tempCatalog();
  const server = { name: "n1", id: "NID1", ver: "2.10.22" };
  const replies: ScrapeReply[] = [
    ...labReplies().filter((r) => !(r.source === "healthz" && r.server === "n1")),
    {
      source: "healthz",
      server: "n1",
      body: {
        server,
        data: {
          status: "error",
          status_code: 500,
          errors: [
            {
              type: "STREAM",
              account: "APP",
              stream: "ORDERS",
              error: "JetStream stream 'APP > ORDERS' is not current",
            },
            { type: "JETSTREAM", error: "JetStream is not current with the meta leader" },
          ],
        },
      },
    },
    { source: "healthz_server", server: "n1", body: { server, data: { status: "ok" } } },
  ];
  const epoch = labEpoch(E1, 1);
  await foldEpoch(t.catalog, { ...epoch, replies });
  assert.deepEqual(
    await q(
      t.catalog,
      "SELECT healthz_status, healthz_server_status, healthz_errors FROM hx.servers WHERE server = 'n1'",
    ),
    [
      {
        healthz_status: "error",
        healthz_server_status: "ok",
        healthz_errors: [
          "STREAM APP > ORDERS: JetStream stream 'APP > ORDERS' is not current",
          "JETSTREAM: JetStream is not current with the meta leader",
        ],
      },
    ],
  );
  // 2.9 has no `errors`: NULL, not an empty list.
  assert.deepEqual(
    await q(t.catalog, "SELECT healthz_errors, healthz_server_status FROM hx.servers WHERE server = 'n2'"),
    [{ healthz_errors: null, healthz_server_status: null }],
  );
});

test("a stream whose state leaves num_subjects out (2.9.10 omits it while 0) has 0 distinct subjects, not NULL", async () => {
  await using t = await tempCatalog();
  let replies = labReplies();
  for (const server of LAB_SERVERS) {
    replies = editReply(
      "jsz",
      server,
      (body) => {
        for (const account of body.data.account_details ?? [])
          for (const s of account.stream_detail ?? [])
            if (s.name === "ORDERS") delete (s as { state?: Record<string, unknown> }).state?.num_subjects;
        return body;
      },
      replies,
    );
  }
  await foldEpoch(t.catalog, labEpoch(E1, 10, replies));
  assert.deepEqual(await q(t.catalog, "SELECT num_subjects FROM hx.streams WHERE stream = 'ORDERS'"), [
    { num_subjects: 0 },
  ]);
});
