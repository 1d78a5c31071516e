/**
 * The Alertmanager resend never overtakes a pending change (spec: Notification deliveries 3;
 * Limits, "newer changes wait behind it"): a finding whose resolve failed to go out is not
 * shown firing again by the resends made while the resolve waits, and a resend that gets
 * through sends the waiting resolve at once. A real Alertmanager behind a gate that refuses
 * requests while the endpoint is "down" and records every request it lets through.
 */
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import type { PostableAlert } from "../../../src/protocol/index.ts";
import { startAlertmanager, type AlertmanagerProcess } from "../../harness/start-alertmanager.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { endpoint, finding, fire, resolve, startNotifyLab, type NotifyLab } from "./notify-lab.ts";

interface Passed {
  readonly at: Date;
  readonly alerts: readonly PostableAlert[];
  readonly status: number;
}

/** An HTTP gate in front of `target`: 503 while down, else the request is forwarded. */
async function startGate(target: string) {
  const passed: Passed[] = [];
  const refused: Passed[] = [];
  let down = false;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const at = new Date();
      const body = Buffer.concat(chunks).toString("utf8");
      if (down) {
        refused.push({ at, alerts: JSON.parse(body) as PostableAlert[], status: 503 });
        res.writeHead(503).end("down");
        return;
      }
      void fetch(`${target}${req.url ?? ""}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      }).then(
        async (r) => {
          const text = await r.text();
          passed.push({ at, alerts: JSON.parse(body) as PostableAlert[], status: r.status });
          res.writeHead(r.status).end(text);
        },
        (err: unknown) => res.writeHead(502).end(String(err)),
      );
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    passed,
    refused,
    setDown(value: boolean) {
      down = value;
    },
    async [Symbol.asyncDispose]() {
      const closed = new Promise<void>((done) => server.close(() => done()));
      server.closeAllConnections();
      await closed;
    },
  };
}

describe("an Alertmanager resend and a pending resolve", () => {
  let lab: NotifyLab;
  let am: AlertmanagerProcess;
  let gate: Awaited<ReturnType<typeof startGate>>;
  const active = async (pk: number) =>
    (await am.alerts()).filter(
      (a) => a.labels.entity_pk === String(pk) && a.labels.alertname === "server-011",
    );
  /** Whether a request that went through told the Alertmanager `pk` is firing (endsAt ahead of it). */
  const firesIn = (p: Passed, pk: number) =>
    p.alerts.some((a) => a.labels.entity_pk === String(pk) && new Date(a.endsAt) > p.at);

  before(async () => {
    lab = await startNotifyLab("pending");
    am = await startAlertmanager();
    gate = await startGate(am.url);
  });
  after(async () => {
    await lab?.[Symbol.asyncDispose]();
    await gate?.[Symbol.asyncDispose]();
    await am?.[Symbol.asyncDispose]();
  });

  test("a resolve that failed is neither overtaken by a resend that re-fires it nor kept waiting behind its backoff", async () => {
    // Resends several times a second; a failed change waits an hour before its next round,
    // so only a resend that gets through can bring the resolve out in the test's time.
    await lab.start([endpoint({ name: "am", type: "alertmanager", url: gate.url })], {
      retryFirstMs: 3_600_000,
      retryMaxMs: 3_600_000,
      resendEveryMs: 200,
      attemptWaitsMs: [20, 20],
    });
    await lab.epoch([fire(finding(21)), fire(finding(22))]);
    await waitFor(async () => (await active(21)).length === 1 && (await active(22)).length === 1, {
      message: "both alerts active in the Alertmanager",
    });

    gate.setDown(true);
    const refusedBefore = gate.refused.length;
    await lab.epoch([resolve(finding(21), new Date())]);
    // The resolve's delivery fails (an hour until its next round), as do resends meanwhile.
    const resolves21 = (p: Passed) =>
      p.alerts.some((a) => a.labels.entity_pk === "21" && new Date(a.endsAt) <= p.at);
    await waitFor(() => gate.refused.slice(refusedBefore).some(resolves21), {
      message: "the resolve refused",
    });
    const resolvedAt = gate.passed.length;
    gate.setDown(false);

    // A resend that gets through carries the alert that stays up, and not the resolved one.
    const refired = () => gate.passed.slice(resolvedAt).filter((p) => firesIn(p, 21));
    await waitFor(() => gate.passed.slice(resolvedAt).some((p) => p.status === 200 && firesIn(p, 22)), {
      message: "22 resent",
    });
    assert.deepEqual(refired(), [], "no request after the resolve showed 21 firing");
    await waitFor(async () => (await active(21)).length === 0, {
      message: "the resolve of 21 reaching the Alertmanager",
    });
    assert.deepEqual(refired(), [], "no request after the resolve showed 21 firing");
    assert.equal((await active(21)).length, 0);
    assert.equal((await active(22)).length, 1);
  });
});
