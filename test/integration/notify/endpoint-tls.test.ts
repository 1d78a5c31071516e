/**
 * A notification endpoint's `tls` (a private CA, a client certificate) against real HTTPS
 * receivers: a Node HTTPS server that requires client certificates (TLS 1.3, and 1.2), and
 * Debian's prometheus-alertmanager with `client_auth_type: RequireAndVerifyClientCert`,
 * reached by `natsmon notify test` spawned as a process with its configuration file.
 * Each failure says which tls setting to give; renewed files are used without a restart.
 */
import assert from "node:assert/strict";
import { copyFile, readFile, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { TLSSocket } from "node:tls";
import { after, before, describe, test } from "node:test";
import type { EndpointConfig, TlsFiles } from "../../../src/config/index.ts";
import { deliver, postOnce, type AttemptResult } from "../../../src/notify/index.ts";
import type { DeliveryLogEntry } from "../../../src/protocol/index.ts";
import {
  requiringClientCerts,
  startAlertmanager,
  type AlertmanagerProcess,
} from "../../harness/start-alertmanager.ts";
import { startTestServer, type TestServer } from "../../harness/start-nats-server.ts";
import { runNatsmon } from "../../harness/natsmon-process.ts";
import { makeTestCerts, type TestCerts } from "../../harness/tls-certs.ts";
import { tempDir } from "../../harness/temp-dir.ts";
import { endpoint } from "./notify-lab.ts";

const UNTRUSTED =
  "the receiver's certificate is not signed by a CA this machine trusts: give the CA that signed it as the endpoint's tls.ca, or add it to the machine's CA store";
const CLIENT_CERT =
  "a receiver that requires client certificates does this: give the endpoint's tls.cert and tls.key";

/** An HTTPS receiver that requires a client certificate signed by `ca`; answers with the client's CN. */
async function mtlsReceiver(
  certs: TestCerts,
  version: "TLSv1.3" | "TLSv1.2",
): Promise<{ url: string; clients: string[]; server: Server }> {
  const clients: string[] = [];
  const server = createServer(
    {
      cert: await readFile(certs.serverCert),
      key: await readFile(certs.serverKey),
      ca: await readFile(certs.ca),
      requestCert: true,
      rejectUnauthorized: true,
      minVersion: version,
      maxVersion: version,
    },
    (req, res) => {
      const cn = (req.socket as TLSSocket).getPeerCertificate().subject.CN;
      clients.push(String(cn));
      req.resume();
      req.on("end", () => res.end());
    },
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, clients, server };
}

const post = (e: EndpointConfig): Promise<AttemptResult> =>
  postOnce(e, '{"alerts":[]}', { userAgent: "natsmon-test", timeoutMs: 5_000 });
const errorOf = (r: AttemptResult): string => ("error" in r ? r.error : `no error: ${r.outcome}`);

describe("a notification endpoint's tls settings against real HTTPS receivers", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let certs: TestCerts;
  let tls13: Awaited<ReturnType<typeof mtlsReceiver>>;
  let tls12: Awaited<ReturnType<typeof mtlsReceiver>>;
  const hook = (url: string, tls?: TlsFiles) => endpoint({ name: "hook", url, ...(tls ? { tls } : {}) });

  before(async () => {
    dir = await tempDir();
    certs = await makeTestCerts(dir.path);
    tls13 = await mtlsReceiver(certs, "TLSv1.3");
    tls12 = await mtlsReceiver(certs, "TLSv1.2");
  });
  after(async () => {
    for (const r of [tls13, tls12]) {
      r?.server.closeAllConnections();
      r?.server.close();
    }
    await dir?.[Symbol.asyncDispose]();
  });

  test("with the CA and a client certificate the alerts are delivered, as that client", async () => {
    const full = { ca: certs.ca, cert: certs.clientCert, key: certs.clientKey };
    for (const receiver of [tls13, tls12]) {
      const result = await post(hook(receiver.url, full));
      assert.equal(result.outcome, "ok", errorOf(result));
      assert.equal(receiver.clients.at(-1), "natsmon test client");
    }
  });

  test("each failure names the tls setting to give", async () => {
    const cases: [string, EndpointConfig, string][] = [
      ["no CA", hook(tls13.url), `fetch failed: self-signed certificate in certificate chain: ${UNTRUSTED}`],
      [
        "another CA",
        hook(tls13.url, { ca: certs.otherCa }),
        "fetch failed: self-signed certificate in certificate chain: the receiver's certificate is not signed " +
          `by the CA in the endpoint's tls.ca (${certs.otherCa}): give the CA that signed it`,
      ],
      [
        "no client certificate, TLS 1.3 (the receiver closes after the handshake)",
        hook(tls13.url, { ca: certs.ca }),
        `fetch failed: other side closed: the receiver closed the connection; ${CLIENT_CERT}`,
      ],
      [
        "no client certificate, TLS 1.2 (the receiver ends the handshake)",
        hook(tls12.url, { ca: certs.ca }),
        "fetch failed: ssl/tls alert handshake failure (SSL alert number 40): the receiver refused the TLS " +
          `handshake; ${CLIENT_CERT}`,
      ],
    ];
    for (const [given, e, error] of cases) {
      const result = await post(e);
      assert.equal(result.outcome, "retry", given);
      assert.equal(errorOf(result), error, given);
    }
  });

  test("renewed client files are used at the next attempt; a half-written pair leaves the last good one in use", async () => {
    const cert = join(dir.path, "rotating.pem");
    const key = join(dir.path, "rotating.key");
    await copyFile(certs.clientCert, cert);
    await copyFile(certs.clientKey, key);
    const e = hook(tls13.url, { ca: certs.ca, cert, key });
    assert.equal((await post(e)).outcome, "ok");
    assert.equal(tls13.clients.at(-1), "natsmon test client");

    // The certificate renewed, its key not yet written: the pair does not match.
    await copyFile(certs.client2Cert, cert);
    assert.equal((await post(e)).outcome, "ok");
    assert.equal(tls13.clients.at(-1), "natsmon test client", "the last good pair is still used");

    await copyFile(certs.client2Key, key);
    assert.equal((await post(e)).outcome, "ok");
    assert.equal(tls13.clients.at(-1), "natsmon test client2", "the renewed certificate is used");
  });

  test("files that cannot be read, with no good ones before, are not sent, and the log says why", async () => {
    const missing = join(dir.path, "missing-ca.pem");
    const log: DeliveryLogEntry[] = [];
    const before = tls13.clients.length;
    const result = await deliver(
      hook(tls13.url, { ca: missing }),
      { body: "{}", alertCount: 0, systems: ["east"] },
      { kind: "change", record: (entry) => log.push(entry), userAgent: "natsmon-test", waitsMs: [10, 10] },
    );
    assert.equal(result.ok, false);
    assert.equal(result.attempts, 1, "not tried again at once: it would fail the same way");
    assert.equal(
      log[0]!.error,
      `not sent: the endpoint's tls files cannot be used (${missing}: it does not exist); ` +
        "`natsmon config check` names the fault; nothing reached the endpoint",
    );
    assert.equal(tls13.clients.length, before, "nothing reached the receiver");
    // Once the file is there, the next attempt goes out.
    await copyFile(certs.ca, missing);
    const full = hook(tls13.url, { ca: missing, cert: certs.clientCert, key: certs.clientKey });
    assert.equal((await post(full)).outcome, "ok");
  });
});

describe("natsmon notify test against a real Alertmanager that requires client certificates", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let certs: TestCerts;
  let am: AlertmanagerProcess;
  let sink: TestServer;
  let config: string;

  before(async () => {
    dir = await tempDir();
    certs = await makeTestCerts(dir.path);
    am = await startAlertmanager({ tls: requiringClientCerts(certs) });
    sink = await startTestServer("am-tls-sink");
    config = join(dir.path, "natsmon.yaml");
    const am1 = `{name: am, url: ${JSON.stringify(am.url)}, subscriptions: ["*"], tls: {ca: ${certs.ca}, cert: ${certs.clientCert}, key: ${certs.clientKey}}}`;
    const am2 = `{name: am-no-cert, url: ${JSON.stringify(am.url)}, subscriptions: ["*"], tls: {ca: ${certs.ca}}}`;
    await writeFile(
      config,
      [
        "node: {id: amtls}",
        "system: {id: east}",
        "notifications:",
        "  alertmanager:",
        `    - ${am1}`,
        `    - ${am2}`,
        "",
      ].join("\n"),
    );
  });
  after(async () => {
    await am?.[Symbol.asyncDispose]();
    await sink?.[Symbol.asyncDispose]();
    await dir?.[Symbol.asyncDispose]();
  });

  test("with the endpoint's CA and client certificate the test alert is active in the Alertmanager", async () => {
    const result = await runNatsmon(["notify", "test", "am", "--config", config, "--server", sink.url]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stdout,
      /^alertmanager endpoint am at https:\/\/127\.0\.0\.1:\d+\/api\/v2\/alerts: HTTP 200 in \d+ ms: test alert delivered\n$/,
    );
    const alerts = await am.alerts('alertname="natsmon-test"');
    assert.equal(alerts.length, 1);
  });

  test("without a client certificate it fails, saying to give tls.cert and tls.key", async () => {
    const result = await runNatsmon([
      "notify",
      "test",
      "am-no-cert",
      "--config",
      config,
      "--server",
      sink.url,
    ]);
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      new RegExp(
        `other side closed: the receiver closed the connection; ${CLIENT_CERT.replaceAll(".", "\\.")}`,
      ),
    );
  });
});
