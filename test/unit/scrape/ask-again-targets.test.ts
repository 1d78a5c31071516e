import assert from "node:assert/strict";
import { test } from "node:test";
import { AskAgainTargets } from "../../../src/scrape/ask-again.ts";

const set = (...servers: string[]) => new Set(servers);
const sorted = (s: Set<string>) => [...s].sort();

test("before any epoch, every expected server and this epoch's members are asked", () => {
  const targets = new AskAgainTargets();
  assert.deepEqual(sorted(targets.targets(set("a", "b", "c"), set("a"), set("a"))), ["a", "b", "c"]);
});

test("a server silent for a whole epoch is asked again only once it answers something", () => {
  const targets = new AskAgainTargets();
  targets.epochEnded(set("a", "b"), set("a", "b"));
  assert.deepEqual(sorted(targets.targets(set("a", "b", "c"), set("a"), set("a"))), ["a", "b"]);
  targets.epochEnded(set("a"), set("a"));
  assert.deepEqual(sorted(targets.targets(set("a", "b"), set("a"), set("a"))), ["a"]);
  // It answered a broadcast of this epoch: the requests it missed are asked of it.
  assert.deepEqual(sorted(targets.targets(set("a", "b"), set("a"), set("a", "b"))), ["a", "b"]);
});

test("a server answering only account-scoped requests is not asked, until it answers a system-wide one", () => {
  const targets = new AskAgainTargets();
  targets.epochEnded(set("a", "bus"), set("a"));
  assert.deepEqual(sorted(targets.targets(set("a", "bus"), set("a"), set("a", "bus"))), ["a"]);
  targets.epochEnded(set("a", "bus"), set("a", "bus"));
  assert.deepEqual(sorted(targets.targets(set("a", "bus"), set("a"), set("a", "bus"))), ["a", "bus"]);
});

test("an epoch with no system-wide answer at all learns nothing about membership", () => {
  const targets = new AskAgainTargets();
  targets.epochEnded(set("a"), set());
  assert.deepEqual(sorted(targets.targets(set("a"), set("a"), set("a"))), ["a"]);
});
