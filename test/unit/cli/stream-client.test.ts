import { test } from "node:test";
import assert from "node:assert/strict";
import { ackInterval } from "../../../src/cli/stream-client.ts";

test("ackInterval: half the server's window, every chunk when the window is unknown or too small", () => {
  assert.equal(ackInterval("8"), 4);
  assert.equal(ackInterval("5"), 2);
  assert.equal(ackInterval("2"), 1);
  assert.equal(ackInterval("1"), 1);
  // An older server sends no window header; a malformed one is ignored the same way.
  assert.equal(ackInterval(undefined), 1);
  assert.equal(ackInterval(""), 1);
  assert.equal(ackInterval("0"), 1);
  assert.equal(ackInterval("-4"), 1);
  assert.equal(ackInterval("4.5"), 1);
  assert.equal(ackInterval("many"), 1);
});
