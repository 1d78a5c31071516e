import assert from "node:assert/strict";
import { test } from "node:test";
import { isReplyInbox, subjectsOverlap, subjectWithin } from "../../../src/catalog/kinds/subjects.ts";

test("subjectsOverlap: some literal subject matches both", () => {
  const yes: [string, string][] = [
    ["orders.eu", "orders.eu"],
    ["orders.*", "orders.eu"],
    ["orders.>", "orders.eu.paris"],
    ["orders.*.paris", "orders.eu.*"],
    [">", "a.b.c"],
    ["a.*", "*.b"],
  ];
  const no: [string, string][] = [
    ["orders.eu", "orders.us"],
    ["orders.*", "orders.eu.paris"],
    ["orders.>", "orders"],
    ["a.b", "a.b.c"],
    ["a.*.c", "a.b.d"],
  ];
  for (const [a, b] of yes) {
    assert.equal(subjectsOverlap(a, b), true, `${a} ~ ${b}`);
    assert.equal(subjectsOverlap(b, a), true, `${b} ~ ${a}`);
  }
  for (const [a, b] of no) {
    assert.equal(subjectsOverlap(a, b), false, `${a} !~ ${b}`);
    assert.equal(subjectsOverlap(b, a), false, `${b} !~ ${a}`);
  }
});

test("subjectWithin: every subject the first matches, the second matches", () => {
  assert.equal(subjectWithin("orders.eu", "orders.>"), true);
  assert.equal(subjectWithin("orders.eu.*", "orders.>"), true);
  assert.equal(subjectWithin("orders.*", "orders.*"), true);
  assert.equal(subjectWithin("orders.eu", "orders.*"), true);
  assert.equal(subjectWithin("orders.>", "orders.*"), false);
  assert.equal(subjectWithin("orders.*", "orders.eu"), false);
  assert.equal(subjectWithin("orders", "orders.>"), false);
  assert.equal(subjectWithin("orders.>", "orders.>"), true);
  assert.equal(subjectWithin("orders.>", ">"), true);
  assert.equal(subjectWithin("a.b.c", "a.b"), false);
});

test("isReplyInbox: subjects under _INBOX., and nuid-named inboxes under a custom prefix", () => {
  const inboxes = [
    "_INBOX.GjvM2BtmC0YmIHSe4DFSK4",
    "_INBOX.GjvM2BtmC0YmIHSe4DFSK4.*",
    "_INBOX.anything.at.all",
    "_R_APP.GjvM2BtmC0YmIHSe4DFSK4",
    "_R_APP.GjvM2BtmC0YmIHSe4DFSK4.*",
    "tenant.a.replies.9xQ2mZp0LkT7vB3nR8sW1c",
    // A nuid without a digit (about one in fifty; seen from nats.js): told by its letters.
    "_R_APP.AlwLkdMytyRrUSLYAKlUAc",
    "_R_APP.AlwLkdMytyRrUSLYAKlUAc.*",
  ];
  const subscriptions = [
    "orders.created",
    "_INBOX",
    "_INBOXES.orders",
    "events.CustomerAddressUpdated", // 22 letters, no digit
    "events.customeraddressupdated2", // 23 characters
    "events.abcdefghij0123456789ab", // one case only
    "events.ABCDEFGHIJKLMNOPQRSTUv", // no digit, one small letter
    "GjvM2BtmC0YmIHSe4DFSK4", // a lone token has no prefix
    "_R_APP.GjvM2BtmC0YmIHSe4DFSK4.>",
    "orders.*",
    "*",
  ];
  for (const s of inboxes) assert.equal(isReplyInbox(s), true, s);
  for (const s of subscriptions) assert.equal(isReplyInbox(s), false, s);
});
