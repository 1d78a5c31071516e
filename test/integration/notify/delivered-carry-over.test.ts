/**
 * The delivered state moved from one bucket per node (`MON_DELIVERED_<node>`, earlier
 * releases) to one per system (`MON_NOTIFIED_<system>`, read by every node holding the
 * system's catalog role). A node's first start on the new layout carries what its old bucket
 * recorded over, once, on a real nats-server: a resolve of an alert the receiver was told
 * before the upgrade still reaches it, and the old bucket's entries are purged.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Kvm } from "@nats-io/kv";
import { receiverDigest } from "../../../src/notify/index.ts";
import { nodeAssets, systemAssets, type DeliveredAlertEntry } from "../../../src/protocol/index.ts";
import { startHttpReceiver } from "../../harness/http-receiver.ts";
import { endpoint, finding, resolve, startNotifyLab, webhookTrail } from "./notify-lab.ts";

test("a node's first start on the per-system buckets carries its old bucket's delivered state over, once", async () => {
  await using lab = await startNotifyLab("upgraded");
  await using receiver = await startHttpReceiver();
  const hook = endpoint({ name: "hook", url: `${receiver.url}/hook` });
  const told = finding(1);
  const entry: DeliveredAlertEntry = {
    system: "east",
    code: told.code,
    entity_type: told.entityType,
    entity_pk: told.entityPk,
    entity_name: told.entityName,
    severity: told.severity,
    starts_at: told.startsAt.toISOString(),
  };
  // What an earlier release left: the receiver knows server-011 of entity 1 firing.
  const legacy = await new Kvm(lab.nc).create(nodeAssets(lab.nodeId).legacyDeliveredBucket);
  await legacy.put("hook.east.server-011.server.1", JSON.stringify(entry));
  await legacy.put("hook.receiver", receiverDigest(hook));

  await lab.start([hook]);
  await lab.epoch([resolve(told, new Date())]);
  const trail = webhookTrail(() => receiver);
  await trail.until("/hook", "resolved server-011 1");
  assert.deepEqual(trail.sent("/hook"), ["resolved server-011 1"], "no firing sent again first");

  const old = await legacy.get("hook.east.server-011.server.1");
  assert.notEqual(old?.operation, "PUT", "the old bucket's entry is purged once carried over");
  const shared = await new Kvm(lab.nc).open(systemAssets("east").deliveredBucket);
  assert.equal((await shared.get("hook.receiver"))?.string(), receiverDigest(hook));
});
