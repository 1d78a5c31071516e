/**
 * The warning a failing endpoint's sender logs, on a real nats-server and a real HTTP receiver:
 * a refused token, a wrong path, a receiver that is not there and an HTTPS receiver whose CA
 * the endpoint does not name each get the status (when there is one), the URL posted to
 * without its query string, and the next step that fits.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { pino } from "pino";
import { startHttpReceiver, type HttpReceiver } from "../../harness/http-receiver.ts";
import { tempDir } from "../../harness/temp-dir.ts";
import { makeTestCerts } from "../../harness/tls-certs.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { endpoint, finding, fire, startNotifyLab, FAST, type NotifyLab } from "./notify-lab.ts";

interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly endpoint?: string;
  readonly status_code?: number;
  readonly url?: string;
  readonly error?: string;
  readonly retry_in_ms?: number;
}

describe("a failing endpoint's warning says what to check", () => {
  let lab: NotifyLab;
  let receiver: HttpReceiver;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let httpsReceiver: Server;
  let httpsUrl: string;
  const lines: LogLine[] = [];
  const retrying = (name: string) =>
    waitFor(
      () =>
        lines.find((l) => l.endpoint === name && l.msg.startsWith("notification delivery failed; retrying")),
      { message: `the retry warning of ${name}` },
    );

  before(async () => {
    lab = await startNotifyLab("warned");
    receiver = await startHttpReceiver();
    receiver.respondWith((req) =>
      req.path.startsWith("/auth") ? { status: 401, body: "token?" } : { status: 404, body: "no such path" },
    );
    dir = await tempDir();
    const certs = await makeTestCerts(dir.path);
    httpsReceiver = createServer(
      { cert: await readFile(certs.serverCert), key: await readFile(certs.serverKey) },
      (_req, res) => res.end(),
    );
    await new Promise<void>((resolve) => httpsReceiver.listen(0, "127.0.0.1", resolve));
    httpsUrl = `https://127.0.0.1:${(httpsReceiver.address() as AddressInfo).port}/hook`;
    const log = pino({ level: "warn" }, { write: (line: string) => lines.push(JSON.parse(line) as LogLine) });
    await lab.start(
      [
        endpoint({
          name: "auth",
          url: `${receiver.url}/auth?token=s3cret`,
          authType: "bearer",
          authToken: "wrong",
        }),
        endpoint({ name: "lost", type: "alertmanager", url: `${receiver.url}/nowhere` }),
        // Nothing listens on port 2, a privileged port no service uses (fetch will not even
        // try port 1, so that would not show a refused connection).
        endpoint({ name: "down", url: "http://127.0.0.1:2/hook" }),
        // Its certificate is signed by the test CA, which the endpoint does not name.
        endpoint({ name: "untrusted", url: httpsUrl }),
      ],
      FAST,
      new Map(),
      undefined,
      log,
    );
    await lab.epoch([fire(finding(1))]);
  });

  after(async () => {
    await lab?.[Symbol.asyncDispose]();
    await receiver?.[Symbol.asyncDispose]();
    httpsReceiver?.closeAllConnections();
    httpsReceiver?.close();
    await dir?.[Symbol.asyncDispose]();
  });

  test("a 401 points at the endpoint's auth-type and auth-token, and the URL leaves its query string out", async () => {
    const line = await retrying("auth");
    assert.equal(line.status_code, 401);
    assert.equal(line.url, `${receiver.url}/auth`);
    assert.match(line.error ?? "", /^HTTP 401: token\?/);
    assert.equal(
      line.msg,
      "notification delivery failed; retrying: check the endpoint's auth-type and auth-token; `natsmon notify test auth` tries it",
    );
    assert.ok(!JSON.stringify(lines).includes("s3cret"), "no line carries the query string");
  });

  test("a 404 points at the endpoint's url, the Alertmanager's base for an alertmanager endpoint", async () => {
    const line = await retrying("lost");
    assert.equal(line.status_code, 404);
    assert.equal(line.url, `${receiver.url}/nowhere/api/v2/alerts`);
    assert.match(
      line.msg,
      /: check the endpoint's url: the Alertmanager's base, under which natsmon posts to \/api\/v2\/alerts; `natsmon notify test lost` tries it$/,
    );
  });

  test("no answer points at the receiver, with no status", async () => {
    const line = await retrying("down");
    assert.equal("status_code" in line, false);
    assert.equal(line.url, "http://127.0.0.1:2/hook");
    assert.match(line.error ?? "", /ECONNREFUSED/);
    assert.match(
      line.msg,
      /: check that the receiver is up and reachable from this node; `natsmon notify test down` tries it$/,
    );
  });

  test("an untrusted certificate: the error names tls.ca, and the warning sends the reader to it", async () => {
    const line = await retrying("untrusted");
    assert.equal("status_code" in line, false);
    assert.match(line.error ?? "", /give the CA that signed it as the endpoint's tls\.ca/);
    assert.match(
      line.msg,
      /: the error names the endpoint setting to fix \(tls or proxy-url\); `natsmon notify test untrusted` tries it$/,
    );
  });
});
