/**
 * Delivery semantics against a real HTTP receiver, through the real outbox, durable consumers,
 * delivered-state KV and delivery log on a real nats-server (spec: Finding status rule 4,
 * Notification deliveries, Errors "Delivery responses", Limits).
 */
import assert from "node:assert/strict";
import { createHash, createHmac } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { WebhookMessage } from "../../../src/protocol/index.ts";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startHttpReceiver, type HttpReceiver, type ReceivedRequest } from "../../harness/http-receiver.ts";
import { runNatsmon } from "../../harness/natsmon-process.ts";
import { tempDir } from "../../harness/temp-dir.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { change, endpoint, finding, fire, resolve, startNotifyLab, type NotifyLab } from "./notify-lab.ts";

/** The alerts of a webhook body as `<status> <entity> <severity>`. */
function alertsOf(req: ReceivedRequest): string[] {
  const body = req.json() as WebhookMessage;
  return body.alerts.map((a) => `${a.status} ${a.labels.entity_pk} ${a.labels.severity}`);
}

describe("webhook deliveries against a real HTTP receiver", () => {
  let lab: NotifyLab;
  let receiver: HttpReceiver;

  before(async () => {
    lab = await startNotifyLab("deliveries");
    receiver = await startHttpReceiver();
  });
  after(async () => {
    await lab?.[Symbol.asyncDispose]();
    await receiver?.[Symbol.asyncDispose]();
  });

  test("stopping while a delivery fails ends at once, without waiting out the retry backoff", async () => {
    // Retries an hour apart: a stop that waited for the backoff would outlast the test.
    await lab.start([endpoint({ name: "failing", url: `${receiver.url}/failing` })], {
      retryFirstMs: 3_600_000,
      retryMaxMs: 3_600_000,
      resendEveryMs: 3_600_000,
    });
    // A slow failure: the stop comes while the attempt waits for its answer.
    receiver.respondWith(() => ({ status: 503, delayMs: 10_000 }));
    const from = receiver.requests.length;
    await lab.epoch([fire(finding(90))]);
    await waitFor(() => receiver.requests.slice(from).some((r) => r.path === "/failing"), {
      message: "the first attempt",
    });
    await lab.stop();
    receiver.respondWith(() => ({ status: 200 }));
    // The unacked change goes at the next start.
    await lab.start([endpoint({ name: "failing", url: `${receiver.url}/failing` })]);
    // The first epoch diffed since the start: a receiver that knows no alert gets its first delivery.
    await lab.epoch([]);
    const delivered = await waitFor(
      () => receiver.requests.slice(from).find((r) => r.path === "/failing" && r.status === 200),
      { message: "the change delivered after the restart" },
    );
    assert.deepEqual(alertsOf(delivered), ["firing 90 warning"]);
    // Resolved, so the endpoints of the next tests do not start with it firing.
    await lab.epoch([resolve(finding(90), new Date())]);
    await waitFor(
      () => receiver.requests.slice(from).some((r) => alertsOf(r).includes("resolved 90 warning")),
      {
        message: "the resolve delivered",
      },
    );
    await lab.stop();
  });

  test("an endpoint pointed at another receiver tells it what is firing; the old one hears no more", async () => {
    await lab.start([endpoint({ name: "moving", url: `${receiver.url}/old` })]);
    const from = receiver.requests.length;
    const at = (path: string) => receiver.requests.slice(from).filter((r) => r.path === path);
    await lab.epoch([fire(finding(70))]);
    await waitFor(() => at("/old").length > 0, { message: "the old receiver told" });
    await lab.start([endpoint({ name: "moving", url: `${receiver.url}/new` })]);
    // The first epoch diffed since the start: a receiver that knows no alert gets its first delivery.
    await lab.epoch([]);
    const told = await waitFor(() => at("/new")[0], { message: "the new receiver told" });
    assert.deepEqual(alertsOf(told), ["firing 70 warning"]);
    await lab.epoch([resolve(finding(70), new Date())]);
    await waitFor(() => at("/new").some((r) => alertsOf(r).includes("resolved 70 warning")), {
      message: "the resolve at the new receiver",
    });
    assert.deepEqual(at("/old").map(alertsOf), [["firing 70 warning"]]);
    await lab.stop();
  });

  test("an endpoint down for a while receives every change after recovery, in order, latest state only", async () => {
    await lab.start([
      endpoint({ name: "down", url: `${receiver.url}/down`, authType: "hmac", authToken: "s3cret" }),
    ]);
    receiver.setStatus(503);
    const from = receiver.requests.length;
    await lab.epoch([fire(finding(1)), fire(finding(2))]);
    await lab.epoch([change(finding(1, "critical"), "warning"), fire(finding(3))]);
    // A fire and resolve while down: never sent as a lone resolve.
    await lab.epoch([fire(finding(4))]);
    await lab.epoch([resolve(finding(4), new Date())]);
    await waitFor(() => receiver.requests.length >= from + 4, { message: "retried attempts while down" });
    receiver.setStatus(200);
    const delivered = await waitFor(() => receiver.requests.slice(from).find((r) => r.status === 200), {
      message: "a delivery after recovery",
    });
    assert.deepEqual(alertsOf(delivered), ["firing 2 warning", "firing 1 critical", "firing 3 warning"]);
    // The signature covers the exact bytes received.
    const expected = `sha256=${createHmac("sha256", "s3cret").update(delivered.body).digest("hex")}`;
    assert.equal(delivered.headers["x-hub-signature-256"], expected);
    const afterRecovery = receiver.requests.slice(receiver.requests.indexOf(delivered) + 1);
    assert.deepEqual(afterRecovery, [], "nothing else is sent: entity 4 fired and resolved while down");
    for (const attempt of receiver.requests.slice(from)) {
      assert.ok(!alertsOf(attempt).some((a) => a.startsWith("resolved 4")), "no lone resolve of entity 4");
    }
  });

  test("every attempt is in the delivery log, one entry per delivery, with status, duration, alert count and body digest", async () => {
    const sent = receiver.requests.filter((r) => r.path === "/down");
    // Log writes do not hold up sending; each delivery lands a moment after it ends.
    const entries = await waitFor(async () => {
      const logged = await lab.log("down");
      return logged.flatMap((e) => e.attempts ?? []).length === sent.length && logged;
    });
    const attempts = entries.flatMap((e) => (e.attempts ?? []).map((a) => ({ entry: e, a })));
    assert.equal(attempts.length, sent.length, "one logged attempt per request the receiver saw");
    for (const [i, { entry, a }] of attempts.entries()) {
      const req = sent[i]!;
      assert.equal(entry.endpoint, "down");
      assert.equal(entry.endpoint_type, "webhook");
      assert.equal(entry.kind, "change");
      assert.equal(a.status_code, req.status);
      assert.equal(a.outcome, req.status === 200 ? "ok" : "retry");
      assert.equal(entry.body_digest, `sha256:${createHash("sha256").update(req.body).digest("hex")}`);
      assert.equal(entry.alert_count, alertsOf(req).length);
      assert.ok(a.duration_ms >= 0);
    }
    assert.deepEqual(
      entries[0]!.attempts?.map((a) => a.attempt),
      [1, 2, 3],
      "a failing delivery makes three attempts before waiting",
    );
    assert.equal(new Set(entries.map((e) => e.delivery_id)).size, entries.length);
    assert.equal(entries.at(-1)!.outcome, "ok");
  });

  test("a resolve reaches the receiver at the severity it knows, once", async () => {
    const from = receiver.requests.length;
    await lab.epoch([resolve(finding(1, "critical"), new Date())]);
    const req = await waitFor(() => receiver.requests[from], { message: "the resolve" });
    assert.deepEqual(alertsOf(req), ["resolved 1 critical"]);
    const body = req.json() as WebhookMessage;
    assert.equal(body.status, "resolved");
    assert.notEqual(body.alerts[0]!.endsAt, "0001-01-01T00:00:00Z");
  });

  test("a 400 ends the attempts of a delivery at once, and the delivery is tried again later", async () => {
    receiver.setStatus(400);
    const from = receiver.requests.length;
    const before = (await lab.log("down")).length;
    await lab.epoch([fire(finding(5))]);
    await waitFor(() => receiver.requests.length >= from + 2, { message: "the delivery tried again" });
    receiver.setStatus(200);
    await waitFor(() => receiver.requests.slice(from).some((r) => r.status === 200), {
      message: "delivered once accepted",
    });
    const entries = (await lab.log("down")).slice(before);
    const rejected = entries.filter((e) => e.outcome === "rejected");
    assert.ok(rejected.length >= 2);
    for (const e of rejected) {
      assert.equal(e.attempts?.length, 1, "a rejected delivery makes no second attempt");
      assert.equal(e.status_code, 400);
    }
    assert.equal(new Set(rejected.map((e) => e.delivery_id)).size, rejected.length);
  });

  test("deliveries replay sends a body the failed deliveries repeated once", async () => {
    const entries = await lab.log("down");
    // What replay sends: each delivery's body, oldest first, a retry round's repeat dropped.
    const expected = entries
      .map((e) => e.body_digest)
      .filter((d, i, all) => i === 0 || all[i - 1] !== d)
      .map((d) => d.replace(/^sha256:/, ""));
    assert.ok(expected.length < entries.length, "the retries of the rejected delivery repeat its body");
    await using dir = await tempDir();
    const config = join(dir.path, "natsmon.yaml");
    await writeFile(
      config,
      [
        `node: {id: ${lab.nodeId}}`,
        "system: {id: east}",
        "notifications:",
        `  webhook: [{name: down, url: ${JSON.stringify(`${receiver.url}/replayed`)}, subscriptions: ["*"]}]`,
        "",
      ].join("\n"),
    );
    const replay = await runNatsmon([
      "deliveries",
      "replay",
      "--endpoint",
      "down",
      "--config",
      config,
      "--server",
      lab.sink.url,
    ]);
    assert.equal(replay.code, 0, replay.stderr);
    const replayed = receiver.requests.filter((r) => r.path === "/replayed");
    const bodies = replayed.map((r) => createHash("sha256").update(r.body).digest("hex"));
    assert.deepEqual(
      bodies.slice(0, expected.length),
      expected,
      "every body once per run of repeats, in order",
    );
    // Then at most one more: the current state of what the bodies left otherwise.
    const closing = /current state: /.test(replay.stdout) ? 1 : 0;
    assert.equal(bodies.length, expected.length + closing, replay.stdout);
    assert.match(
      replay.stdout,
      new RegExp(`replayed ${expected.length} of ${entries.length} logged deliveries`),
    );
  });

  test("a restarted sender knows what its receiver was told: no change, nothing sent; a resolve still arrives", async () => {
    await lab.start([
      endpoint({ name: "down", url: `${receiver.url}/down`, authType: "hmac", authToken: "s3cret" }),
    ]);
    const from = receiver.requests.length;
    await lab.epoch([fire(finding(2))]);
    await lab.epoch([resolve(finding(3), new Date())]);
    const req = await waitFor(() => receiver.requests[from], { message: "the resolve of entity 3" });
    assert.deepEqual(alertsOf(req), ["resolved 3 warning"], "entity 2 was known firing: not sent again");
  });

  test("a slow endpoint does not delay a fast one", async () => {
    const slow = await startHttpReceiver();
    try {
      // The slow endpoint answers only after this test is over.
      slow.respondWith(() => ({ status: 200, delayMs: 60_000 }));
      await lab.start([
        endpoint({ name: "slow", url: slow.url }),
        endpoint({ name: "fast", url: `${receiver.url}/fast` }),
      ]);
      const from = receiver.requests.length;
      await lab.epoch([fire(finding(6))]);
      await waitFor(() => slow.requests.length > 0, { message: "the slow endpoint's request" });
      // A new endpoint first learns what is firing (2 and 5), then hears of 6.
      await waitFor(
        () =>
          receiver.requests
            .slice(from)
            .some((r) => r.path === "/fast" && alertsOf(r).includes("firing 6 warning")),
        { message: "the fast endpoint's delivery of entity 6" },
      );
      const fastLog = await waitFor(async () => (await lab.log("fast")).find((e) => e.outcome === "ok"));
      assert.ok(fastLog, "the fast endpoint's delivery completed");
      assert.deepEqual(await lab.log("slow"), [], "while the slow endpoint's first attempt is still waiting");
    } finally {
      await slow[Symbol.asyncDispose]();
    }
  });
});

describe("deliveries replay of a finding that came back to an earlier state", () => {
  test("deliveries replay sends a body again when a later change brought it back, leaving the receiver at the last state", async () => {
    // A lab of its own: nothing else firing, so every delivery to the endpoint is about 8.
    await using lab = await startNotifyLab("replay-flip");
    await using receiver = await startHttpReceiver();
    await lab.start([endpoint({ name: "flip", url: `${receiver.url}/flip` })]);
    const flip = () => receiver.requests.filter((r) => r.path === "/flip");
    // warning, critical, warning again: the first and last webhook bodies are the same bytes.
    await lab.epoch([fire(finding(8))]);
    await waitFor(() => flip().length >= 1, { message: "the firing delivered" });
    await lab.epoch([change(finding(8, "critical"), "warning")]);
    await waitFor(() => flip().length >= 2, { message: "the critical delivered" });
    await lab.epoch([change(finding(8, "warning"), "critical")]);
    await waitFor(() => flip().length >= 3, { message: "the warning delivered" });
    const [warning, critical, again] = flip().map((r) => r.body.toString());
    assert.deepEqual(alertsOf(flip()[2]!), ["firing 8 warning"]);
    assert.equal(warning, again, "the same state twice: the same body");
    assert.notEqual(warning, critical);
    const delivered = flip().map((r) => r.body.toString());
    await using dir = await tempDir();
    const config = join(dir.path, "natsmon.yaml");
    await writeFile(
      config,
      [
        `node: {id: ${lab.nodeId}}`,
        "system: {id: east}",
        "notifications:",
        `  webhook: [{name: flip, url: ${JSON.stringify(`${receiver.url}/flip-replayed`)}, subscriptions: ["*"]}]`,
        "",
      ].join("\n"),
    );
    const replay = await runNatsmon([
      "deliveries",
      "replay",
      "--endpoint",
      "flip",
      "--config",
      config,
      "--server",
      lab.sink.url,
    ]);
    assert.equal(replay.code, 0, replay.stderr);
    const replayed = receiver.requests
      .filter((r) => r.path === "/flip-replayed")
      .map((r) => r.body.toString());
    assert.deepEqual(replayed, delivered, "every delivery, in order: the receiver ends at warning");
  });
});
