import { test } from "node:test";
import assert from "node:assert/strict";
import { groupReplies, repliesOf } from "../../../src/catalog/replies.ts";

test("good replies are grouped by source and server with their envelope's server info", () => {
  const grouped = groupReplies([
    { source: "varz", server: "n1", body: { server: { name: "n1", id: "X" }, data: { cpu: 1 } } },
    { source: "varz", server: "n2", body: { server: { name: "n2" }, data: { cpu: 2 } } },
    { source: "healthz", server: "n1", body: { server: { name: "n1" }, data: { status: "ok" } } },
  ]);
  assert.deepEqual(grouped.problems, []);
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
