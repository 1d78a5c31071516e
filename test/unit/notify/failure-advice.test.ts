/**
 * The next step a failed delivery's warning names, by how it failed: given / when / then.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { failureAdvice, publicUrl, type AttemptResult } from "../../../src/notify/index.ts";

const TRY = "; `natsmon notify test ops-hook` tries it";
const hook = {
  name: "ops-hook",
  type: "webhook" as const,
  url: "https://hooks.example.com/natsmon?token=t0p",
};
const am = { name: "ops-hook", type: "alertmanager" as const, url: "http://am.example.com:9093" };

describe("failureAdvice", () => {
  const rows: {
    name: string;
    endpoint: typeof hook | typeof am;
    last: AttemptResult;
    status?: number;
    next: string;
  }[] = [
    {
      name: "401: the credentials",
      endpoint: hook,
      last: { outcome: "rejected", status: 401, error: "HTTP 401", ms: 3 },
      status: 401,
      next: "check the endpoint's auth-type and auth-token",
    },
    {
      name: "403: the credentials",
      endpoint: hook,
      last: { outcome: "rejected", status: 403, error: "HTTP 403: forbidden", ms: 3 },
      status: 403,
      next: "check the endpoint's auth-type and auth-token",
    },
    {
      name: "404 from a webhook: its url",
      endpoint: hook,
      last: { outcome: "rejected", status: 404, error: "HTTP 404", ms: 3 },
      status: 404,
      next: "check the endpoint's url",
    },
    {
      name: "404 from an Alertmanager: its url, which is the base",
      endpoint: am,
      last: { outcome: "rejected", status: 404, error: "HTTP 404", ms: 3 },
      status: 404,
      next: "check the endpoint's url: the Alertmanager's base, under which natsmon posts to /api/v2/alerts",
    },
    {
      name: "no answer in time: the receiver",
      endpoint: hook,
      last: { outcome: "retry", error: "no answer within 10000 ms", ms: 10_000 },
      next: "check that the receiver is up and reachable from this node",
    },
    {
      name: "connection refused: the receiver",
      endpoint: hook,
      last: { outcome: "retry", error: "fetch failed: connect ECONNREFUSED 127.0.0.1:1", ms: 1 },
      next: "check that the receiver is up and reachable from this node",
    },
    {
      name: "an untrusted certificate: the setting the error names",
      endpoint: hook,
      last: {
        outcome: "retry",
        error:
          "fetch failed: unable to verify the first certificate: the receiver's certificate is not signed by a CA " +
          "this machine trusts: give the CA that signed it as the endpoint's tls.ca, or add it to the machine's CA store",
        ms: 1,
      },
      next: "the error names the endpoint setting to fix (tls or proxy-url)",
    },
    {
      name: "a proxy that asks for credentials: the setting the error names",
      endpoint: hook,
      last: {
        outcome: "retry",
        error:
          "fetch failed: Proxy Authentication Required (407): the proxy in proxy-url (http://p:3128) asks for " +
          "credentials: give them in proxy-url (http://USER:PASSWORD@host:port)",
        ms: 1,
      },
      next: "the error names the endpoint setting to fix (tls or proxy-url)",
    },
    {
      name: "a redirect: the url",
      endpoint: hook,
      last: { outcome: "retry", status: 302, error: "HTTP 302: redirects to /x", ms: 1 },
      status: 302,
      next: "set the endpoint's url to the address that answers",
    },
    {
      name: "503: the receiver's own trouble",
      endpoint: hook,
      last: { outcome: "retry", status: 503, error: "HTTP 503", ms: 1 },
      status: 503,
      next: "the receiver is failing or overloaded: check its own logs",
    },
    {
      name: "400: the receiver's answer",
      endpoint: am,
      last: {
        outcome: "rejected",
        status: 400,
        error: 'HTTP 400: "at least one label pair required"',
        ms: 1,
      },
      status: 400,
      next: "the receiver refused the alerts: its answer (error) says why",
    },
  ];
  for (const row of rows) {
    test(`given ${row.name}, the warning says what to check, then how to try it`, () => {
      const advice = failureAdvice(row.endpoint, row.last);
      assert.equal(advice.nextStep, row.next + TRY);
      assert.equal(advice.fields.status_code, row.status);
      assert.equal(
        "status_code" in advice.fields,
        row.status !== undefined,
        "no status field without an answer",
      );
    });
  }

  test("the URL is where natsmon posts, without its query string", () => {
    assert.equal(failureAdvice(hook, rows[0]!.last).fields.url, "https://hooks.example.com/natsmon");
    assert.equal(failureAdvice(am, rows[0]!.last).fields.url, "http://am.example.com:9093/api/v2/alerts");
  });

  test("a name that is not a plain shell word is quoted in the command", () => {
    const advice = failureAdvice({ ...hook, name: "ops hook's" }, rows[0]!.last);
    assert.match(advice.nextStep, /`natsmon notify test 'ops hook'\\''s'` tries it$/);
  });
});

test("publicUrl leaves out credentials, query string and fragment", () => {
  assert.equal(
    publicUrl("https://u:p@hooks.example.com:8443/a/b?token=x#f"),
    "https://hooks.example.com:8443/a/b",
  );
});
