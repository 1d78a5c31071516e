/**
 * Findings name a stream or consumer with its JetStream domain, as the fold's messages do:
 * a hub and a leafnode with its own domain can each hold a stream of the same account and
 * name, and their findings must not read the same.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ScrapeReply } from "../../../src/catalog/index.ts";
import { CHECKS, type Check } from "../../../src/checks/index.ts";
import type { LabBody } from "../catalog/lab-epoch.ts";
import { runFixture } from "./check-harness.ts";
import { editStream } from "./fixtures/consumer.ts";
import { editJsz, streamIn } from "./fixtures/jetstream.ts";

function check(code: string): Check {
  const found = CHECKS.find((c) => c.code === code);
  assert.ok(found, code);
  return found;
}

type Json = Record<string, unknown>;

/**
 * The lab with leaf l1 (JetStream domain `leaf`) holding a stream APP/ORDERS of its own
 * beside the hub's (domain `hub`): a copy of n1's, R1 on l1, with its consumer proc (425
 * delivered, as on the hub), l1 leading both.
 */
function ordersInBothDomains(): ScrapeReply[] {
  const hubCopy = (body: LabBody) => structuredClone(streamIn(body, "ORDERS")) as Json;
  let orders: Json | undefined;
  editJsz("n1", (body) => void (orders = hubCopy(body)));
  assert.ok(orders);
  const onLeaf = { name: "l1", leader: "l1" };
  (orders.config as Json).num_replicas = 1;
  delete (orders.config as Json).placement;
  orders.cluster = onLeaf;
  orders.consumer_detail = (orders.consumer_detail as Json[])
    .filter((c) => c.name === "proc")
    .map((c) => ({ ...c, cluster: onLeaf }));
  (orders.state as Json).consumer_count = 1;
  return editJsz("l1", (body) => {
    body.data.account_details[0]!.stream_detail.push(
      orders as LabBody["data"]["account_details"][0]["stream_detail"][0],
    );
    body.data.streams = 2;
    body.data.consumers = 1;
  });
}

test("a stream check names each of two same-named streams with its domain", async () => {
  // jetstream-003 at 1%: both ORDERS hold 1010 of max_msgs 100000.
  const rows = await runFixture(check("jetstream-003"), [ordersInBothDomains()], { p_warn_percent: 1 });
  const orders = rows.filter((r) => String(r.entity_name).endsWith("/APP/ORDERS"));
  assert.deepEqual(orders.map((r) => [r.entity_name, r.server]).sort(), [
    ["hub/APP/ORDERS", "n2"],
    ["leaf/APP/ORDERS", "l1"],
  ]);
  assert.notEqual(orders[0]!.entity_pk, orders[1]!.entity_pk);
});

test("a consumer check names each of two same-named consumers with its stream's domain", async () => {
  // consumer-004: every copy of both streams starts at 500; each proc delivered up to 425.
  const skipped = editStream("ORDERS", (s) => ((s.state as Json).first_seq = 500), ordersInBothDomains());
  const rows = await runFixture(check("consumer-004"), [skipped]);
  assert.deepEqual(rows.map((r) => [r.entity_name, r.server]).sort(), [
    ["hub/APP/ORDERS/proc", "n1"],
    ["leaf/APP/ORDERS/proc", "l1"],
  ]);
});
