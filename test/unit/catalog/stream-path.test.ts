import { test } from "node:test";
import assert from "node:assert/strict";
import { streamPath } from "../../../src/catalog/kinds/jsz-assets.ts";

test("a stream is named <domain>/<account>/<name> in the fold's messages, without a leading / when it has no domain", () => {
  assert.equal(streamPath({ domain: "hub", account: "APP", name: "ORDERS" }), "hub/APP/ORDERS");
  assert.equal(streamPath({ domain: "", account: "APP", name: "ORDERS" }), "APP/ORDERS");
});
