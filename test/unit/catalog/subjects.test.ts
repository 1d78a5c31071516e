import assert from "node:assert/strict";
import { test } from "node:test";
import { subjectsOverlap, subjectWithin } from "../../../src/catalog/kinds/subjects.ts";

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
