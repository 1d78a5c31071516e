/**
 * `natsmon config check --connect`, spawned as a user runs it, reaches each enabled notification
 * endpoint as the node would (URL, TLS files, auth headers) without sending an alert: Debian's
 * real Alertmanager, plain and behind mutual TLS, a plain HTTP receiver and an HTTPS one whose
 * CA the endpoint does not name. A line per endpoint says what it found, or which setting to fix.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import {
  requiringClientCerts,
  startAlertmanager,
  type AlertmanagerProcess,
} from "../harness/start-alertmanager.ts";
import { startHttpReceiver, type HttpReceiver } from "../harness/http-receiver.ts";
import { runNatsmon } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { makeTestCerts, type TestCerts } from "../harness/tls-certs.ts";

describe("config check --connect probes the notification endpoints without sending alerts", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let certs: TestCerts;
  let am: AlertmanagerProcess;
  let amTls: AlertmanagerProcess;
  let receiver: HttpReceiver;
  let httpsHook: Server;
  let config: string;
  let httpsUrl: string;

  before(async () => {
    dir = await tempDir();
    certs = await makeTestCerts(dir.path);
    am = await startAlertmanager();
    amTls = await startAlertmanager({ tls: requiringClientCerts(certs) });
    receiver = await startHttpReceiver();
    receiver.respondWith((req) =>
      req.path.startsWith("/moved/")
        ? { status: 301, headers: { location: "https://am.example.com/api/v2/status" } }
        : { status: req.path.startsWith("/locked/") ? 401 : req.method === "GET" ? 405 : 200 },
    );
    httpsHook = createServer(
      { cert: await readFile(certs.serverCert), key: await readFile(certs.serverKey) },
      (_req, res) => res.end(),
    );
    await new Promise<void>((resolve) => httpsHook.listen(0, "127.0.0.1", resolve));
    httpsUrl = `https://127.0.0.1:${(httpsHook.address() as AddressInfo).port}/hook`;
    const mtls = `{ca: ${certs.ca}, cert: ${certs.clientCert}, key: ${certs.clientKey}}`;
    const entry = (fields: string) => `    - {${fields}, subscriptions: ["*"]}`;
    config = join(dir.path, "natsmon.yaml");
    await writeFile(
      config,
      [
        "system: {id: east}",
        "notifications:",
        "  alertmanager:",
        entry(`name: am, url: ${JSON.stringify(am.url)}`),
        entry(`name: am-mtls, url: ${JSON.stringify(amTls.url)}, tls: ${mtls}`),
        entry(`name: am-no-cert, url: ${JSON.stringify(amTls.url)}, tls: {ca: ${certs.ca}}`),
        entry(`name: not-am, url: ${JSON.stringify(receiver.url)}`),
        entry(`name: am-moved, url: ${JSON.stringify(`${receiver.url}/moved`)}`),
        entry(
          `name: am-locked, url: ${JSON.stringify(`${receiver.url}/locked`)}, auth-type: bearer, auth-token: old`,
        ),
        "  webhook:",
        entry(
          `name: hook, url: ${JSON.stringify(`${receiver.url}/hook`)}, auth-type: bearer, auth-token: t0ken`,
        ),
        entry(`name: hook-tls, url: ${JSON.stringify(httpsUrl)}`),
        entry(`name: hook-off, url: ${JSON.stringify(`${receiver.url}/off`)}, enabled: false`),
        "",
      ].join("\n"),
    );
  });
  after(async () => {
    httpsHook?.closeAllConnections();
    httpsHook?.close();
    await receiver?.[Symbol.asyncDispose]();
    await am?.[Symbol.asyncDispose]();
    await amTls?.[Symbol.asyncDispose]();
    await dir?.[Symbol.asyncDispose]();
  });

  test("a line per endpoint; exit 1 since some fail; nothing is posted", async () => {
    const result = await runNatsmon(["config", "check", "--connect", "--config", config]);
    assert.equal(result.code, 1, result.stdout + result.stderr);
    const lines = result.stdout.split("\n").filter((l) => l.includes(" endpoint "));
    // Webhooks first, then Alertmanagers, each in the file's order.
    assert.deepEqual(lines, [
      `webhook endpoint hook: reachable, ${receiver.url}/hook answers HTTP 405 to a GET; only a POST shows whether ` +
        "it takes the alerts: `natsmon notify test hook` sends one",
      `webhook endpoint hook-tls: cannot reach ${httpsUrl}: ` +
        "fetch failed: unable to verify the first certificate: the receiver's certificate is not signed by a " +
        "CA this machine trusts: give the CA that signed it as the endpoint's tls.ca, or add it to the machine's CA store",
      "webhook endpoint hook-off: disabled; not checked",
      `alertmanager endpoint am: ok, Alertmanager 0.25.0 answers at ${am.url}/api/v2/status, cluster disabled`,
      `alertmanager endpoint am-mtls: ok, Alertmanager 0.25.0 answers at ${amTls.url}/api/v2/status, cluster disabled`,
      `alertmanager endpoint am-no-cert: cannot reach ${amTls.url}/api/v2/status: fetch failed: other side closed: ` +
        "the receiver closed the connection; a receiver that requires client certificates does this: " +
        "give the endpoint's tls.cert and tls.key",
      `alertmanager endpoint not-am: ${receiver.url}/api/v2/status answers HTTP 405, not as an Alertmanager v2 API ` +
        "does: set the endpoint's url to the Alertmanager's base (natsmon posts to <url>/api/v2/alerts)",
      `alertmanager endpoint am-moved: ${receiver.url}/moved/api/v2/status answers HTTP 301, redirecting to ` +
        "https://am.example.com/api/v2/status; natsmon does not follow redirects: set the endpoint's url to the " +
        "address that answers",
      `alertmanager endpoint am-locked: ${receiver.url}/locked/api/v2/status answers HTTP 401: check the ` +
        "endpoint's auth-type and auth-token",
    ]);
    // The probes are GETs with the endpoint's auth; no alert went anywhere.
    const hook = receiver.requests.find((r) => r.path === "/hook");
    assert.equal(hook?.method, "GET");
    assert.equal(hook.headers.authorization, "Bearer t0ken");
    assert.ok(
      receiver.requests.every((r) => r.method === "GET"),
      receiver.requests.map((r) => r.method).join(),
    );
    assert.ok(!receiver.requests.some((r) => r.path === "/off"), "a disabled endpoint is not reached");
    assert.deepEqual(await am.alerts(), []);
    assert.deepEqual(await amTls.alerts(), []);
  });
});
