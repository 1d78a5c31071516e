/**
 * The account and micro service checks across epochs where part of the system did not
 * answer: each compares with the last epoch that has data for the server or account, and
 * says nothing on the first.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { CHECKS, type Check } from "../../../src/checks/index.ts";
import { labReplies } from "../catalog/lab-epoch.ts";
import { runFixture } from "./check-harness.ts";
import { accountStatz, instance, services, withAccounts } from "./fixtures/accounts.ts";
import { without } from "./fixtures/server.ts";

const check = (code: string): Check => CHECKS.find((c) => c.code === code)!;

test("accounts-002 says nothing on the first epoch, whatever the counters hold", async () => {
  assert.deepEqual(await runFixture(check("accounts-002"), [withAccounts()]), []);
});

test("accounts-002 compares a server that missed the previous epoch with the epoch it last answered", async () => {
  // n2 (APP: 2 slow consumers) does not answer the middle epoch, then reports 5.
  const rows = await runFixture(check("accounts-002"), [
    withAccounts(),
    without("n2", withAccounts()),
    accountStatz("n2", "APP", (a) => (a.slow_consumers = 5), withAccounts()),
  ]);
  assert.deepEqual(
    rows.map((r) => [r.entity_name, r.new_slow_consumers, r.servers, r.server]),
    [["APP", 3n, ["n2"], null]],
  );
});

test("service-002 compares with the account's last gathering when the previous epoch could not gather it", async () => {
  const rows = await runFixture(check("service-002"), [
    [...labReplies(), services("APP", [instance("orders", "a1", "1.2.0")])],
    labReplies(),
    [...labReplies(), services("APP", [])],
  ]);
  assert.deepEqual(
    rows.map((r) => [r.entity_name, r.entity_key, r.prev_instances]),
    [["orders (APP)", "orders", 1n]],
  );
});

test("accounts-002 says slow consumers of $G and the system account may be links between servers, not subscribers", async () => {
  // n2 counted 2 more slow consumers under $G, SYS and APP each.
  const more = (acc: string, replies: ReturnType<typeof withAccounts>) =>
    accountStatz("n2", acc, (a) => (a.slow_consumers = Number(a.slow_consumers) + 2), replies);
  const rows = await runFixture(check("accounts-002"), [
    withAccounts(),
    more("$G", more("SYS", more("APP", withAccounts()))),
  ]);
  assert.deepEqual(rows.map((r) => [r.entity_name, r.new_slow_consumers, r.server_links]).sort(), [
    ["$G", 2n, true],
    ["APP", 2n, false],
    ["SYS", 2n, true],
  ]);
});
