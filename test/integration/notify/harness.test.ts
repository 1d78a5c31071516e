import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { startHttpReceiver, type ReceivedRequest } from "../../harness/http-receiver.ts";
import {
  ALERTMANAGER_RECEIVER,
  DEFAULT_EXTERNAL_URL,
  startAlertmanager,
} from "../../harness/start-alertmanager.ts";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("the HTTP receiver", () => {
  test("records a POST's method, path, headers and exact body bytes, and answers 200 with an empty body", async () => {
    await using receiver = await startHttpReceiver();
    assert.match(receiver.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const seen: ReceivedRequest[] = [];
    receiver.onRequest((req) => seen.push(req));
    // Not valid UTF-8 on purpose: the body must be kept as bytes, not decoded and re-encoded.
    const body = Buffer.concat([Buffer.from('{"name":"Ünïcode ✓"}'), Buffer.from([0xff, 0x0a])]);

    const response = await fetch(`${receiver.url}/hook?x=1`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Hub-Signature-256": "sha256=abc" },
      body,
    });

    assert.equal(response.status, 200);
    assert.equal(await response.text(), "");
    const [req] = await receiver.waitForRequests(1);
    assert.equal(req!.method, "POST");
    assert.equal(req!.path, "/hook?x=1");
    assert.equal(req!.headers["content-type"], "application/json");
    assert.equal(req!.headers["x-hub-signature-256"], "sha256=abc");
    assert.equal(req!.headers["content-length"], String(body.length));
    assert.deepEqual(req!.body, body);
    assert.ok(req!.at instanceof Date);
    assert.deepEqual(seen, [req]);
  });

  test("parses a JSON body and stops calling a listener once it unsubscribes", async () => {
    await using receiver = await startHttpReceiver();
    let calls = 0;
    const unsubscribe = receiver.onRequest(() => calls++);
    await fetch(receiver.url, { method: "POST", body: '{"a":[1,2]}' });
    unsubscribe();
    await fetch(receiver.url, { method: "POST", body: "{}" });

    const [first, second] = await receiver.waitForRequests(2);
    assert.deepEqual(first!.json(), { a: [1, 2] });
    assert.equal(second!.text(), "{}");
    assert.equal(calls, 1);
  });

  test("answers as scripted: 503 with a body for the first request, then 200", async () => {
    await using receiver = await startHttpReceiver();
    receiver.respondWith((_req, n) => (n === 0 ? { status: 503, body: "try later" } : { status: 200 }));

    const first = await fetch(receiver.url, { method: "POST", body: "1" });
    const second = await fetch(receiver.url, { method: "POST", body: "2" });

    assert.deepEqual([first.status, await first.text()], [503, "try later"]);
    assert.deepEqual([second.status, await second.text()], [200, ""]);
    assert.deepEqual(
      receiver.requests.map((r) => r.text()),
      ["1", "2"],
    );
  });

  test("answers every request with the status setStatus gives", async () => {
    await using receiver = await startHttpReceiver();
    receiver.setStatus(500);
    const statuses = [];
    for (let i = 0; i < 2; i++) statuses.push((await fetch(receiver.url, { method: "POST" })).status);
    assert.deepEqual(statuses, [500, 500]);
  });

  test("answers another request while a delayed answer is still pending", async () => {
    await using receiver = await startHttpReceiver();
    receiver.respondWith((req) => (req.path === "/slow" ? { status: 200, delayMs: 1000 } : { status: 204 }));
    let slowDone = false;
    const slow = fetch(`${receiver.url}/slow`, { method: "POST" }).then((r) => {
      slowDone = true;
      return r.status;
    });
    await receiver.waitForRequests(1);

    const fast = await fetch(`${receiver.url}/fast`, { method: "POST" });

    assert.equal(fast.status, 204);
    assert.equal(slowDone, false);
    assert.equal(await slow, 200);
  });

  test("closes a connection waiting for a delayed answer when disposed", async () => {
    const receiver = await startHttpReceiver();
    // An answer that never comes in the test's lifetime: a dispose waiting for it would hang.
    receiver.respondWith(() => ({ status: 200, delayMs: 2_147_483_647 }));
    const pending = fetch(receiver.url, { method: "POST" });
    await receiver.waitForRequests(1);
    await receiver[Symbol.asyncDispose]();

    await assert.rejects(pending);
  });
});

describe("Alertmanager 0.25 (prometheus-alertmanager)", () => {
  test("starts on an OS-chosen loopback port without gossip and stops with its process on dispose", async () => {
    const am = await startAlertmanager();
    assert.match(am.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const status = (await (await fetch(`${am.url}/api/v2/status`)).json()) as {
      cluster: { status: string };
      config: { original: string };
    };
    assert.equal(status.cluster.status, "disabled");
    assert.match(status.config.original, /group_by:\s*\n?\s*- alertname\s*\n\s*- system/);
    assert.equal(am.externalUrl, DEFAULT_EXTERNAL_URL);
    assert.equal(alive(am.pid), true);

    await am[Symbol.asyncDispose]();

    assert.equal(alive(am.pid), false);
  });

  test("lists a POSTed alert with its labels, and drops it once re-POSTed with a past endsAt", async () => {
    await using am = await startAlertmanager();
    const labels = { alertname: "HarnessProbe", system: "lab", severity: "warning" };
    const startsAt = new Date(Date.now() - 60_000).toISOString();
    const post = (alert: object) =>
      fetch(`${am.url}/api/v2/alerts`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify([alert]),
      });

    const firing = await post({ labels, annotations: { summary: "probe" }, startsAt });
    assert.equal(firing.status, 200);
    assert.equal(await firing.text(), "");
    const [listed, ...others] = await am.alerts('alertname="HarnessProbe"');
    assert.deepEqual(others, []);
    assert.deepEqual(listed!.labels, labels);
    assert.deepEqual(listed!.annotations, { summary: "probe" });
    assert.deepEqual(
      listed!.receivers.map((r) => r.name),
      [ALERTMANAGER_RECEIVER],
    );
    assert.equal(listed!.status.state, "active");

    const resolved = await post({ labels, startsAt, endsAt: new Date(Date.now() - 1000).toISOString() });
    assert.equal(resolved.status, 200);
    assert.deepEqual(await am.alerts(), []);
  });

  test("posts the group to the webhook receiver: firing at once for an old startsAt, then resolved", async () => {
    await using receiver = await startHttpReceiver();
    await using am = await startAlertmanager({ webhookUrl: `${receiver.url}/am-webhook` });
    const labels = { alertname: "HarnessWebhook", system: "lab" };
    const startsAt = new Date(Date.now() - 60_000).toISOString();
    const post = (alert: object) =>
      fetch(`${am.url}/api/v2/alerts`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify([alert]),
      });

    await post({ labels, startsAt });
    const [firing] = await receiver.waitForRequests(1);
    await post({ labels, startsAt, endsAt: new Date().toISOString() });
    const [, resolved] = await receiver.waitForRequests(2);

    type Body = { status: string; receiver: string; groupLabels: object; externalURL: string };
    const bodyOf = (r: ReceivedRequest) => r.json() as Body;
    assert.equal(firing!.path, "/am-webhook");
    assert.equal(firing!.headers["content-type"], "application/json");
    assert.deepEqual(
      [bodyOf(firing!), bodyOf(resolved!)].map((b) => b.status),
      ["firing", "resolved"],
    );
    assert.equal(bodyOf(firing!).receiver, ALERTMANAGER_RECEIVER);
    assert.deepEqual(bodyOf(firing!).groupLabels, labels);
    assert.equal(bodyOf(firing!).externalURL, DEFAULT_EXTERNAL_URL);
  });

  test("names the Debian package when the binary is missing", async () => {
    await assert.rejects(
      startAlertmanager({ binary: "/nonexistent/prometheus-alertmanager" }),
      /install Debian's prometheus-alertmanager package/,
    );
  });

  test("reports its log when it exits during start-up", async () => {
    // A config error makes Alertmanager exit at once; a bad webhook URL is one.
    await assert.rejects(startAlertmanager({ webhookUrl: "not a url" }), (err: Error) => {
      assert.match(err.message, /exited during start-up/);
      assert.match(err.message, /Loading configuration file failed/);
      return true;
    });
  });
});
