import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { groupReplies, repliesOf } from "../../../src/catalog/replies.ts";
import { parseJsonExact } from "../../../src/lib/index.ts";

test("good replies are grouped by source and server with their envelope's server info", () => {
  const grouped = groupReplies([
    { source: "varz", server: "n1", body: { server: { name: "n1", id: "X" }, data: { cpu: 1 } } },
    { source: "varz", server: "n2", body: { server: { name: "n2" }, data: { cpu: 2 } } },
    { source: "healthz", server: "n1", body: { server: { name: "n1" }, data: { status: "ok" } } },
    // STATSZ carries its payload under `statsz`.
    { source: "statsz", server: "n1", body: { server: { name: "n1" }, statsz: { mem: 5 } } },
  ]);
  assert.deepEqual(grouped.problems, []);
  assert.deepEqual(repliesOf(grouped, "statsz").get("n1")?.data, { mem: 5 });
  assert.deepEqual([...repliesOf(grouped, "varz").keys()], ["n1", "n2"]);
  assert.deepEqual(repliesOf(grouped, "varz").get("n1"), { data: { cpu: 1 }, info: { name: "n1", id: "X" } });
  assert.equal(repliesOf(grouped, "jsz").size, 0);
});

test("error envelopes, bodies without data and duplicates are left out and described", () => {
  const grouped = groupReplies([
    {
      source: "jsz",
      server: "n1",
      body: { server: { name: "n1" }, error: { code: 500, description: "boom" } },
    },
    { source: "jsz", server: "n2", body: "not json at all" },
    { source: "jsz", server: "n3", body: { server: { name: "n3" }, data: [] } },
    { source: "varz", server: "n1", body: { data: {} } },
    { source: "varz", server: "n1", body: { data: { again: true } } },
  ]);
  assert.deepEqual(grouped.problems, [
    "jsz from n1: error 500 boom",
    "jsz from n2: reply has no data object",
    "jsz from n3: reply has no data object",
    "varz from n1: duplicate reply dropped",
  ]);
  assert.equal(repliesOf(grouped, "jsz").size, 0);
  assert.deepEqual(repliesOf(grouped, "varz").get("n1")?.data, {});
});

test("the pages of one server's CONNZ are merged in page order, and a page seen twice is dropped", () => {
  const page = (n: number, cids: number[], offset: number) => ({
    source: "connz",
    server: "n1",
    page: n,
    body: {
      server: { name: "n1" },
      data: { total: 5, offset, num_connections: cids.length, connections: cids.map((cid) => ({ cid })) },
    },
  });
  const grouped = groupReplies([
    page(3, [5], 4),
    page(1, [1, 2], 0),
    page(2, [3, 4], 2),
    page(2, [3, 4], 2),
    {
      ...page(1, [9], 0),
      server: "n2",
      body: { server: { name: "n2" }, data: { connections: [{ cid: 9 }] } },
    },
  ]);
  assert.deepEqual(grouped.problems, ["connz from n1 page 2: duplicate reply dropped"]);
  const n1 = repliesOf(grouped, "connz").get("n1")!;
  assert.deepEqual(
    n1.data.connections,
    [1, 2, 3, 4, 5].map((cid) => ({ cid })),
  );
  assert.equal(n1.data.num_connections, 5);
  assert.equal(n1.data.offset, 0);
  assert.deepEqual(repliesOf(grouped, "connz").get("n2")!.data.connections, [{ cid: 9 }]);
});

test("a reply without a page number is page 1: a second one is a duplicate, and unpaged sources have no page 2", () => {
  const grouped = groupReplies([
    { source: "connz", server: "n1", body: { data: { connections: [{ cid: 1 }] } } },
    { source: "connz", server: "n1", page: 1, body: { data: { connections: [{ cid: 1 }] } } },
    { source: "varz", server: "n1", body: { data: { cpu: 1 } } },
    { source: "varz", server: "n1", page: 2, body: { data: { cpu: 2 } } },
  ]);
  assert.deepEqual(grouped.problems, [
    "connz from n1: duplicate reply dropped",
    "varz from n1 page 2: duplicate reply dropped",
  ]);
  assert.deepEqual(repliesOf(grouped, "connz").get("n1")!.data.connections, [{ cid: 1 }]);
  assert.deepEqual(repliesOf(grouped, "varz").get("n1")!.data, { cpu: 1 });
});

test("the pages of one server's JSZ are merged by account: page 1's fields, every account once", () => {
  // Page 1 is the recorded reply of the lab's meta leader; pages 2 and 3 repeat an account
  // the way a 2.9 server's shuffled first page overlaps its sorted later pages.
  const fixture = join(import.meta.dirname, "../../fixtures/scrape/lab-2.9.10/jsz.json");
  const bodies = (parseJsonExact(readFileSync(fixture, "utf8")) as { bodies: LabJsz[] }).bodies;
  const n1 = bodies.find((b) => b.server.name === "n1")!;
  const account = (id: string, streams: string[]) => ({
    name: id,
    id,
    stream_detail: streams.map((name) => ({ name })),
  });
  const app = n1.data.account_details[0]!;
  const first = { ...n1, data: { ...n1.data, accounts: 4, account_details: [app, account("B", ["b1"])] } };
  const later = (details: unknown[]) => ({
    server: n1.server,
    data: { server_id: n1.data.server_id, accounts: 5, streams: 99, account_details: details },
  });
  const grouped = groupReplies([
    { source: "jsz", server: "n1", page: 3, body: later([account("C", ["c1", "c2"])]) },
    { source: "jsz", server: "n1", page: 1, body: first },
    {
      source: "jsz",
      server: "n1",
      page: 2,
      body: later([account("B", ["b1", "stale"]), account("APP", [])]),
    },
    { source: "jsz", server: "n2", body: bodies.find((b) => b.server.name === "n2") },
  ]);
  assert.deepEqual(grouped.problems, []);
  const merged = repliesOf(grouped, "jsz").get("n1")!;
  assert.deepEqual(
    (merged.data.account_details as { id: string; stream_detail: { name: string }[] }[]).map((a) => [
      a.id,
      a.stream_detail.map((s) => s.name),
    ]),
    [
      ["APP", app.stream_detail.map((s) => s.name)],
      ["B", ["b1"]],
      ["C", ["c1", "c2"]],
    ],
  );
  // Every other field is page 1's: the totals servers.ts reads and the meta group.
  const { account_details: _pages, ...rest } = merged.data;
  const { account_details: _first, ...firstRest } = first.data;
  assert.deepEqual(rest, firstRest);
  assert.equal(merged.data.accounts, 4);
  assert.deepEqual(merged.info, n1.server);
  assert.equal(
    repliesOf(grouped, "jsz").get("n2")!.data.streams,
    bodies.find((b) => b.server.name === "n2")!.data.streams,
  );
});

interface LabJsz {
  server: Record<string, unknown> & { name: string };
  data: Record<string, unknown> & { account_details: { id: string; stream_detail: { name: string }[] }[] };
}

test("ACCOUNTZ's later pages are its accounts in detail, gathered in page order", () => {
  const info = { name: "n1" };
  const grouped = groupReplies([
    {
      source: "accountz",
      server: "n1",
      page: 3,
      body: { server: info, data: { account_detail: { account_name: "B" } } },
    },
    {
      source: "accountz",
      server: "n1",
      page: 1,
      body: { server: info, data: { accounts: ["A", "B", "C"] } },
    },
    {
      source: "accountz",
      server: "n1",
      page: 2,
      body: { server: info, data: { account_detail: { account_name: "A" } } },
    },
    // An account gone since the list was read: its detail is an error, described and left out.
    {
      source: "accountz",
      server: "n1",
      page: 4,
      body: { server: info, error: { code: 500, description: "Account C does not exist" } },
    },
  ]);
  assert.deepEqual(grouped.problems, ["accountz from n1 page 4: error 500 Account C does not exist"]);
  assert.deepEqual(repliesOf(grouped, "accountz").get("n1")?.data, {
    accounts: ["A", "B", "C"],
    account_details: [{ account_name: "A" }, { account_name: "B" }],
  });
});
