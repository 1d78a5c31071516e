/**
 * A notification endpoint's `proxy-url` through Debian's real tinyproxy: plain HTTP goes as an
 * absolute-form request, HTTPS through a CONNECT tunnel with the endpoint's own TLS files (a
 * real Alertmanager that requires client certificates behind it), a proxy that asks for
 * credentials takes them from the URL, and each failure says what to fix without showing the
 * password.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { EndpointConfig } from "../../../src/config/index.ts";
import { postOnce, probeEndpoint, type AttemptResult } from "../../../src/notify/index.ts";
import { startHttpReceiver, type HttpReceiver } from "../../harness/http-receiver.ts";
import {
  requiringClientCerts,
  startAlertmanager,
  type AlertmanagerProcess,
} from "../../harness/start-alertmanager.ts";
import { startTinyproxy, type TinyproxyProcess } from "../../harness/start-tinyproxy.ts";
import { tempDir } from "../../harness/temp-dir.ts";
import { makeTestCerts, type TestCerts } from "../../harness/tls-certs.ts";
import { endpoint } from "./notify-lab.ts";

const ALERTS = JSON.stringify([
  {
    labels: { alertname: "natsmon-proxied", system: "east" },
    annotations: {},
    startsAt: new Date().toISOString(),
  },
]);
const post = (e: EndpointConfig, body = '{"alerts":[]}'): Promise<AttemptResult> =>
  postOnce(e, body, { userAgent: "natsmon-test", timeoutMs: 5_000 });
const errorOf = (r: AttemptResult): string => ("error" in r ? r.error : `no error: ${r.outcome}`);

describe("a notification endpoint's proxy-url through a real tinyproxy", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let certs: TestCerts;
  let proxy: TinyproxyProcess;
  let authProxy: TinyproxyProcess;
  let receiver: HttpReceiver;
  let am: AlertmanagerProcess;
  const withCredentials = (url: string, user: string, password: string) =>
    url.replace("http://", `http://${user}:${password}@`);

  before(async () => {
    dir = await tempDir();
    certs = await makeTestCerts(dir.path);
    proxy = await startTinyproxy();
    authProxy = await startTinyproxy({ basicAuth: { user: "natsmon", password: "s3cret" } });
    receiver = await startHttpReceiver();
    am = await startAlertmanager({ tls: requiringClientCerts(certs) });
  });
  after(async () => {
    await am?.[Symbol.asyncDispose]();
    await receiver?.[Symbol.asyncDispose]();
    await proxy?.[Symbol.asyncDispose]();
    await authProxy?.[Symbol.asyncDispose]();
    await dir?.[Symbol.asyncDispose]();
  });

  test("plain HTTP goes to the proxy as an absolute-form request", async () => {
    const result = await post(
      endpoint({ name: "hook", url: `${receiver.url}/proxied`, proxyUrl: proxy.url }),
    );
    assert.equal(result.outcome, "ok", errorOf(result));
    const request = receiver.requests.find((r) => r.path === "/proxied");
    assert.match(request?.headers.via ?? "", /tinyproxy/, "the request came through the proxy");
    assert.match(
      await proxy.log(),
      new RegExp(`Request \\(file descriptor \\d+\\): POST ${receiver.url}/proxied HTTP`),
    );
  });

  test("HTTPS is tunnelled with CONNECT, with the endpoint's CA and client certificate, to a real Alertmanager", async () => {
    const am1 = endpoint({
      type: "alertmanager",
      name: "am",
      url: am.url,
      proxyUrl: proxy.url,
      tls: { ca: certs.ca, cert: certs.clientCert, key: certs.clientKey },
    });
    const result = await post(am1, ALERTS);
    assert.equal(result.outcome, "ok", errorOf(result));
    assert.equal((await am.alerts('alertname="natsmon-proxied"')).length, 1);
    assert.match(await proxy.log(), new RegExp(`CONNECT ${new URL(am.url).host} HTTP`));
    const probe = await probeEndpoint(am1, { userAgent: "natsmon-test" });
    assert.ok(probe.ok, probe.detail);
    assert.match(probe.detail, /^ok, Alertmanager 0\.25\.0 answers at /);
  });

  test("a proxy that asks for credentials takes them from proxy-url; without them each failure says so", async () => {
    const hook = (proxyUrl: string) => endpoint({ name: "hook", url: `${receiver.url}/auth`, proxyUrl });
    const am1 = (proxyUrl: string) =>
      endpoint({
        type: "alertmanager",
        name: "am",
        url: am.url,
        proxyUrl,
        tls: { ca: certs.ca, cert: certs.clientCert, key: certs.clientKey },
      });
    const asks = `the proxy in proxy-url (${authProxy.url}) asks for credentials: give them in proxy-url (http://USER:PASSWORD@host:port)`;

    const plain = await post(hook(authProxy.url));
    assert.equal(plain.outcome, "retry");
    assert.equal(errorOf(plain), `fetch failed: Proxy Authentication Required (407): ${asks}`);
    const tunnelled = await post(am1(authProxy.url), ALERTS);
    assert.equal(tunnelled.outcome, "retry");
    assert.equal(
      errorOf(tunnelled),
      `fetch failed: Proxy response (407) !== 200 when HTTP Tunneling: ${asks}`,
    );

    const wrong = withCredentials(authProxy.url, "natsmon", "wrong-pass");
    const refused = await post(am1(wrong), ALERTS);
    assert.equal(
      errorOf(refused),
      "fetch failed: Proxy response (401) !== 200 when HTTP Tunneling: the proxy in proxy-url " +
        `(${withCredentials(authProxy.url, "natsmon", "***")}) refused the credentials in proxy-url: check its ` +
        "user and password",
    );
    // A plain request gets tinyproxy's 401 page as the answer: the password is not in it either.
    const plainRefused = await post(hook(wrong));
    assert.match(errorOf(plainRefused), /^HTTP 401: /);
    for (const r of [refused, plainRefused])
      assert.ok(!errorOf(r).includes("wrong-pass"), "the password is never shown");

    const right = withCredentials(authProxy.url, "natsmon", "s3cret");
    assert.equal((await post(hook(right))).outcome, "ok");
    const through = await post(am1(right), ALERTS);
    assert.equal(through.outcome, "ok", errorOf(through));
  });

  test("a proxy that cannot be reached is named as such", async () => {
    // A proxy that ran there and stopped: nothing listens at its address now.
    const gone = await startTinyproxy();
    const url = gone.url;
    await gone[Symbol.asyncDispose]();
    const result = await post(endpoint({ name: "hook", url: `${receiver.url}/gone`, proxyUrl: url }));
    assert.equal(result.outcome, "retry");
    assert.equal(
      errorOf(result),
      `fetch failed: connect ECONNREFUSED ${new URL(url).host}: the proxy in proxy-url (${url}) cannot be ` +
        "reached: check proxy-url, and that the proxy runs and is reachable from here",
    );
  });
});
