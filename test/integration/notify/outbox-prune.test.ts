/**
 * The outbox does not grow for ever: a resolved entry every endpoint has read, whose finding
 * no receiver is known to have firing, is deleted once it is old enough; firing entries, and
 * resolved ones an endpoint still holds, stay. The consumer of an endpoint no longer
 * configured is deleted at start, so it holds nothing back. Real nats-server, outbox,
 * consumers, KV and HTTP receiver.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { jetstreamManager } from "@nats-io/jetstream";
import { nodeAssets } from "../../../src/protocol/index.ts";
import { pruneOutbox } from "../../../src/notify/index.ts";
import { startHttpReceiver, type HttpReceiver } from "../../harness/http-receiver.ts";
import { waitFor } from "../../harness/wait-for.ts";
import {
  endpoint,
  webhookTrail,
  finding,
  fire,
  resolve,
  startNotifyLab,
  type NotifyLab,
} from "./notify-lab.ts";

describe("pruning the outbox", () => {
  let lab: NotifyLab;
  let receiver: HttpReceiver;
  const { sent, until } = webhookTrail(() => receiver);
  /** The outbox's subjects (one per finding) and what each says, as `<status> <entity_pk>`. */
  const outbox = async () => {
    const jsm = await jetstreamManager(lab.nc);
    const info = await jsm.streams.info(nodeAssets(lab.nodeId).outboxStream, { subjects_filter: ">" });
    const states: string[] = [];
    for (const subject of Object.keys(info.state.subjects ?? {}).sort()) {
      const m = await jsm.streams.getMessage(nodeAssets(lab.nodeId).outboxStream, { last_by_subj: subject });
      const entry = m!.json<{ transition: { status: string; entity_pk: number } }>();
      states.push(`${entry.transition.status} ${entry.transition.entity_pk}`);
    }
    return states;
  };
  const a = () => endpoint({ name: "a", url: `${receiver.url}/a` });
  // Connection refused: its sender retries, holding what it has not delivered.
  const dead = endpoint({ name: "dead", url: "http://127.0.0.1:1/dead" });

  before(async () => {
    lab = await startNotifyLab("prune");
    receiver = await startHttpReceiver();
  });
  after(async () => {
    await lab?.[Symbol.asyncDispose]();
    await receiver?.[Symbol.asyncDispose]();
  });

  test("a resolved entry an endpoint has not delivered is held, and so is every firing one", async () => {
    await lab.start([a(), dead]);
    const f1 = finding(1);
    const f2 = finding(2);
    await lab.epoch([fire(f1), fire(f2)]);
    const resolvedAt = await lab.epoch([resolve(f1, new Date())]);
    await until("/a", "resolved server-011 1");
    // Old enough: entries older than an hour, an hour after the resolve.
    const now = new Date(resolvedAt.getTime() + 3_600_000);
    const result = await pruneOutbox(lab.nc, lab.nodeId, { keepResolvedMs: 60_000, systems: ["east"], now });
    assert.deepEqual(result, { deleted: 0, held: 1 });
    assert.deepEqual(await outbox(), ["resolved 1", "firing 2"]);
  });

  test("an endpoint disabled or removed loses its consumer at start; then the resolve is pruned", async () => {
    const jsm = await jetstreamManager(lab.nc);
    const consumers = async () => {
      const names: string[] = [];
      // The endpoints' durables (reads of the latest entries leave ordered consumers for a while).
      for await (const c of jsm.consumers.list(nodeAssets(lab.nodeId).outboxStream))
        if (c.name.startsWith("notify_")) names.push(c.name);
      return names.sort();
    };
    assert.deepEqual(await consumers(), ["notify_a", "notify_dead"]);
    await lab.start([a(), { ...dead, enabled: false }]);
    assert.deepEqual(await consumers(), ["notify_a"]);
    await lab.start([a()]);
    assert.deepEqual(await consumers(), ["notify_a"]);
    // Too recent to go: kept for the day.
    assert.deepEqual(
      await pruneOutbox(lab.nc, lab.nodeId, {
        keepResolvedMs: 86_400_000,
        systems: ["east"],
        now: new Date(0),
      }),
      {
        deleted: 0,
        held: 0,
      },
    );
    await waitFor(
      async () => {
        // a's consumer acks asynchronously after the delivery.
        const info = await jsm.consumers.info(nodeAssets(lab.nodeId).outboxStream, "notify_a");
        return info.num_pending === 0 && info.num_ack_pending === 0;
      },
      { message: "a to have acked everything" },
    );
    // Two rounds at once: both find the resolve, one deletes it, the other finds it gone.
    const rounds = await Promise.all([
      pruneOutbox(lab.nc, lab.nodeId, { keepResolvedMs: 0, systems: ["east"] }),
      pruneOutbox(lab.nc, lab.nodeId, { keepResolvedMs: 0, systems: ["east"] }),
    ]);
    assert.equal(rounds[0].deleted + rounds[1].deleted, 1);
    assert.deepEqual(await outbox(), ["firing 2"]);
    assert.deepEqual(await pruneOutbox(lab.nc, lab.nodeId, { keepResolvedMs: 0, systems: ["east"] }), {
      deleted: 0,
      held: 0,
    });
  });

  test("after pruning, a finding that fires again reaches the endpoint, and a new endpoint gets what is firing", async () => {
    const from = receiver.requests.length;
    await lab.epoch([fire(finding(1, "critical"))]);
    await until("/a", "firing server-011 1", from);
    await lab.start([a(), endpoint({ name: "b", url: `${receiver.url}/b` })]);
    // The first epoch diffed since the start: a receiver that knows no alert gets its first delivery.
    await lab.epoch([]);
    await until("/b", "firing server-011 2", from);
    await until("/b", "firing server-011 1", from);
    assert.deepEqual(sent("/b", from).sort(), ["firing server-011 1", "firing server-011 2"]);
    assert.deepEqual(await outbox(), ["firing 1", "firing 2"]);
  });

  test("a resolve a removed endpoint's receiver has not heard is kept, and reaches it when the endpoint is back", async () => {
    const b = endpoint({ name: "b", url: `${receiver.url}/b` });
    const from = receiver.requests.length;
    await lab.epoch([fire(finding(3))]);
    await until("/b", "firing server-011 3", from);
    await until("/a", "firing server-011 3", from);
    // b is taken out of the configuration; its receiver still has finding 3 firing.
    await lab.start([a()]);
    await lab.epoch([resolve(finding(3), new Date())]);
    await until("/a", "resolved server-011 3", from);
    const jsm = await jetstreamManager(lab.nc);
    await waitFor(
      async () => {
        const info = await jsm.consumers.info(nodeAssets(lab.nodeId).outboxStream, "notify_a");
        return info.num_pending === 0 && info.num_ack_pending === 0;
      },
      { message: "a to have acked everything" },
    );
    // Every consumer has read it; it is held for b's receiver alone.
    assert.deepEqual(await pruneOutbox(lab.nc, lab.nodeId, { keepResolvedMs: 0, systems: ["east"] }), {
      deleted: 0,
      held: 1,
    });
    await lab.start([a(), b]);
    await until("/b", "resolved server-011 3", from);
    await waitFor(
      async () =>
        (await pruneOutbox(lab.nc, lab.nodeId, { keepResolvedMs: 0, systems: ["east"] })).deleted === 1,
      {
        message: "the resolve to be pruned once b's receiver has it",
      },
    );
    assert.deepEqual(await outbox(), ["firing 1", "firing 2"]);
  });
});
