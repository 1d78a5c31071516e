/**
 * Findings that were already firing reach endpoints that did not hear of them: an endpoint
 * configured after the finding fired, and one whose subscriptions were widened; an endpoint
 * whose receiver already knows a finding is not told again (README: "A new endpoint starts
 * with what is firing now"; delivered state). Real nats-server, outbox, consumers, KV and HTTP
 * receiver; the start-up sync is called as the catalog side calls it.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { FiringFinding } from "../../../src/domain/index.ts";
import { startHttpReceiver, type HttpReceiver } from "../../harness/http-receiver.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { endpoint, webhookTrail, finding, fire, startNotifyLab, type NotifyLab } from "./notify-lab.ts";

describe("findings already firing reach the endpoints that do not know them", () => {
  let lab: NotifyLab;
  let receiver: HttpReceiver;
  const { sent, until } = webhookTrail(() => receiver);
  /**
   * Every request the endpoint's receiver got has ended as a delivery logged ok: a stop
   * before the sender has the answer sends it again at the next start (at least once),
   * which is not what these tests are about.
   */
  const delivered = (name: string) =>
    waitFor(
      async () =>
        (await lab.log(name)).filter((e) => e.outcome === "ok").length >=
        receiver.requests.filter((r) => r.path === `/${name}`).length,
      { message: `every request to ${name} logged as delivered` },
    );

  before(async () => {
    lab = await startNotifyLab("already");
    receiver = await startHttpReceiver();
  });
  after(async () => {
    await lab?.[Symbol.asyncDispose]();
    await receiver?.[Symbol.asyncDispose]();
  });

  test("an endpoint configured after a finding fired is sent it, synced at start, once an epoch is diffed", async () => {
    const full: FiringFinding = finding(1, "warning", "jetstream-003");
    // No endpoint yet: the transition goes nowhere.
    await lab.start([]);
    const epoch = await lab.epoch([fire(full)]);
    const notifier = await lab.start([
      endpoint({ name: "late", url: `${receiver.url}/late`, subscriptions: ["jetstream-003"] }),
    ]);
    // As the catalog side does at start, with the baseline the tracker loaded.
    await notifier.syncFiring("east", epoch, new Map([["full", full]]));
    // Its receiver knows no alert: its first delivery waits for an epoch diffed since the start.
    await lab.epoch([]);
    await until("/late", "firing jetstream-003 1");
    // A second sync (the next start) finds the outbox in line: nothing more is sent.
    await notifier.syncFiring("east", epoch, new Map([["full", full]]));
    await lab.epoch([fire(finding(2, "warning", "jetstream-003"))]);
    await until("/late", "firing jetstream-003 2");
    assert.deepEqual(sent("/late"), ["firing jetstream-003 1", "firing jetstream-003 2"]);
  });

  test("a widened subscription gets what was already firing; what the receiver knows is not sent again", async () => {
    const narrow = endpoint({
      name: "redir",
      url: `${receiver.url}/redir`,
      subscriptions: ["jetstream-003"],
    });
    await lab.start([narrow]);
    const from = receiver.requests.length;
    await lab.epoch([
      fire(finding(11, "warning", "jetstream-003")),
      fire(finding(12, "critical", "server-019")),
    ]);
    await until("/redir", "firing jetstream-003 11", from);
    assert.ok(!sent("/redir", from).includes("firing server-019 12"), "not subscribed yet");
    await delivered("redir");

    const widened = { ...narrow, subscriptions: ["jetstream-003", "server-019"] };
    const late2 = endpoint({ ...widened, name: "late2", url: `${receiver.url}/late2` });
    const restart = receiver.requests.length;
    await lab.start([widened, late2]);
    // The first epoch diffed since the start: a receiver that knows no alert gets its first delivery.
    await lab.epoch([]);
    await until("/redir", "firing server-019 12", restart);
    await until("/late2", "firing server-019 12", restart);
    await until("/late2", "firing jetstream-003 11", restart);
    // A later change arrives behind anything the restart sent.
    await lab.epoch([fire(finding(13, "warning", "server-019"))]);
    await until("/redir", "firing server-019 13", restart);
    assert.deepEqual(
      sent("/redir", restart),
      ["firing server-019 12", "firing server-019 13"],
      "jetstream-003 11 was known: not sent again",
    );

    await until("/late2", "firing server-019 13", restart);
    await delivered("redir");
    await delivered("late2");
    // The same configuration again: the receiver knows everything, nothing is repeated.
    const again = receiver.requests.length;
    await lab.start([widened, late2]);
    await lab.epoch([fire(finding(14, "warning", "jetstream-003"))]);
    await until("/redir", "firing jetstream-003 14", again);
    await until("/late2", "firing jetstream-003 14", again);
    assert.deepEqual(sent("/redir", again), ["firing jetstream-003 14"]);
    assert.deepEqual(sent("/late2", again), ["firing jetstream-003 14"]);
  });
});
