/**
 * One delivery's attempts against a real HTTP receiver (spec: Limits "Delivery attempt
 * timeout", "Attempts per delivery"; Errors "Delivery responses").
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { deliver, type DeliveryRequest } from "../../../src/notify/index.ts";
import type { DeliveryLogEntry } from "../../../src/protocol/index.ts";
import { startHttpReceiver } from "../../harness/http-receiver.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { endpoint } from "./notify-lab.ts";

const REQUEST: DeliveryRequest = { body: '{"alerts":[]}\n', alertCount: 0, systems: ["east"] };

async function deliverOnce(url: string, options: { timeoutMs?: number } = {}) {
  const log: DeliveryLogEntry[] = [];
  const result = await deliver(endpoint({ name: "e", url }), REQUEST, {
    kind: "change",
    record: (e) => log.push(e),
    userAgent: "natsmon-test",
    waitsMs: [10, 20],
    ...options,
  });
  return { result, log };
}

describe("the attempts of one delivery", () => {
  const rows: { name: string; statuses: number[]; then: { ok: boolean; outcomes: string[] } }[] = [
    { name: "200 succeeds at once", statuses: [200], then: { ok: true, outcomes: ["ok"] } },
    {
      name: "503 then 200 succeeds on the second attempt",
      statuses: [503, 200],
      then: { ok: true, outcomes: ["retry", "ok"] },
    },
    {
      name: "503 three times fails after three attempts",
      statuses: [503, 503, 503, 200],
      then: { ok: false, outcomes: ["retry", "retry", "retry"] },
    },
    {
      name: "429 is retried like a 5xx",
      statuses: [429, 200],
      then: { ok: true, outcomes: ["retry", "ok"] },
    },
    {
      name: "400 ends the attempts at once",
      statuses: [400, 200],
      then: { ok: false, outcomes: ["rejected"] },
    },
    {
      name: "422 ends the attempts at once",
      statuses: [422, 200],
      then: { ok: false, outcomes: ["rejected"] },
    },
  ];
  for (const r of rows) {
    test(r.name, async () => {
      await using receiver = await startHttpReceiver();
      receiver.respondWith((_, n) => ({ status: r.statuses[n] ?? 200, body: "why" }));
      const { result, log } = await deliverOnce(receiver.url);
      assert.equal(result.ok, r.then.ok);
      assert.equal(log.length, 1, "one log entry for the delivery, written when it ends");
      const [entry] = log as [DeliveryLogEntry];
      const attempts = entry.attempts ?? [];
      assert.deepEqual(
        attempts.map((a) => a.outcome),
        r.then.outcomes,
      );
      assert.deepEqual(
        attempts.map((a) => a.attempt),
        r.then.outcomes.map((_, i) => i + 1),
      );
      assert.deepEqual(
        attempts.map((a) => a.status_code),
        r.statuses.slice(0, attempts.length),
      );
      assert.equal(receiver.requests.length, attempts.length);
      // The entry's own outcome is its last attempt's.
      assert.equal(entry.attempt, attempts.length);
      assert.equal(entry.outcome, r.then.outcomes.at(-1));
      assert.equal(entry.status_code, attempts.at(-1)!.status_code);
      assert.equal(entry.time, attempts[0]!.time);
      for (const a of attempts.filter((x) => x.outcome !== "ok"))
        assert.match(a.error ?? "", /^HTTP \d{3}: why$/);
    });
  }

  test("a receiver that does not answer in time is a failed attempt, retried", async () => {
    await using receiver = await startHttpReceiver();
    receiver.respondWith(() => ({ status: 200, delayMs: 5_000 }));
    const { result, log } = await deliverOnce(receiver.url, { timeoutMs: 100 });
    assert.equal(result.ok, false);
    const attempts = log[0]?.attempts ?? [];
    assert.deepEqual(
      attempts.map((a) => a.outcome),
      ["retry", "retry", "retry"],
    );
    for (const e of attempts) {
      assert.equal(e.status_code, undefined);
      assert.match(e.error ?? "", /no answer within 100 ms/);
    }
  });

  test("a delivery stopped by shutdown says so, not that an operation was aborted", async () => {
    await using receiver = await startHttpReceiver();
    receiver.respondWith(() => ({ status: 200, delayMs: 5_000 }));
    const stop = new AbortController();
    const log: DeliveryLogEntry[] = [];
    const delivering = deliver(endpoint({ name: "e", url: receiver.url }), REQUEST, {
      kind: "change",
      record: (e) => log.push(e),
      userAgent: "natsmon-test",
      waitsMs: [10, 20],
      signal: stop.signal,
    });
    await waitFor(() => receiver.requests.length > 0, { timeoutMs: 10_000, message: "the request arrived" });
    stop.abort();
    const result = await delivering;
    assert.equal(result.ok, false);
    assert.equal(log[0]?.attempts?.length, 1, "no attempt after the stop");
    assert.match(log[0].error ?? "", /^stopped before the endpoint answered: natsmon is shutting down/);
  });

  test("a refused connection is a failed attempt with the reason", async () => {
    const receiver = await startHttpReceiver();
    const url = receiver.url;
    await receiver[Symbol.asyncDispose]();
    const { result, log } = await deliverOnce(url);
    assert.equal(result.ok, false);
    assert.equal(log[0]?.attempts?.length, 3);
    assert.match(log[0].error ?? "", /ECONNREFUSED/);
  });
});

describe("a redirecting receiver", () => {
  for (const status of [301, 302, 303, 307, 308]) {
    test(`${status} is a failed attempt naming the target, never a delivery`, async () => {
      await using receiver = await startHttpReceiver();
      // The redirect's target answers 200 to anything: followed, it would have counted.
      receiver.respondWith((req) =>
        req.path === "/hook" ? { status, headers: { location: "/landed" } } : { status: 200, body: "landed" },
      );
      const { result, log } = await deliverOnce(`${receiver.url}/hook`);
      assert.equal(result.ok, false);
      assert.deepEqual(
        receiver.requests.map((r) => r.path),
        ["/hook", "/hook", "/hook"],
        "the redirect is not followed",
      );
      const attempts = log[0]?.attempts ?? [];
      assert.deepEqual(
        attempts.map((a) => [a.outcome, a.status_code]),
        [
          ["retry", status],
          ["retry", status],
          ["retry", status],
        ],
      );
      assert.match(attempts[0]!.error ?? "", /redirects to \/landed.*does not follow redirects/);
    });
  }
});

describe("a request that cannot be built", () => {
  // Start-up validation refuses these tokens; the sender must still say what happened if one
  // gets through, not report the receiver as silent.
  const rows = [
    { given: "a bearer token with a line break", authType: "bearer", authToken: "s3cret\nx" },
    { given: "a bearer token fetch cannot encode", authType: "bearer", authToken: "s3cret-🔑" },
  ] as const;
  for (const r of rows) {
    test(`given ${r.given}, the delivery is logged as not sent, once, naming the header but not the secret`, async () => {
      await using receiver = await startHttpReceiver();
      const log: DeliveryLogEntry[] = [];
      const broken = endpoint({ name: "e", url: receiver.url, authType: r.authType, authToken: r.authToken });
      const result = await deliver(broken, REQUEST, {
        kind: "change",
        record: (e) => log.push(e),
        userAgent: "natsmon-test",
        waitsMs: [10, 20],
      });
      assert.equal(result.ok, false);
      assert.equal(result.last.outcome, "unsent");
      assert.equal(result.attempts, 1, "trying again would fail the same way");
      const [entry] = log as [DeliveryLogEntry];
      assert.equal(entry.attempts?.length, 1);
      assert.equal(entry.outcome, "retry", "the sender tries the batch again later");
      assert.equal(entry.status_code, undefined);
      assert.equal(
        entry.error,
        "not sent: the request could not be built: the authorization header, made from the endpoint's auth " +
          "settings, is not a valid HTTP header value (natsmon config check names the fault); " +
          "nothing reached the endpoint",
      );
      assert.ok(!entry.error.includes("s3cret"), "the token is not in the log");
      // The receiver was up all along: a good request reaches it, the broken one never did.
      const { result: good } = await deliverOnce(receiver.url);
      assert.equal(good.ok, true);
      assert.equal(receiver.requests.length, 1);
      assert.equal(receiver.requests[0]!.headers.authorization, undefined);
    });
  }
});
