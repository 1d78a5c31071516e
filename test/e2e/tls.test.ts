/**
 * TLS towards NATS, against a real nats-server that requires TLS and verifies clients
 * (`verify: true`), with certificates made by openssl for the test:
 * - a node whose sink and monitored system are that server scrapes, folds and answers;
 * - the client commands and the HTTP gateway reach it with --tlsca/--tlscert/--tlskey, or
 *   NATS_CA/NATS_CERT/NATS_KEY;
 * - a client without the CA, or without a certificate, is told which flag to give;
 * - files start-up cannot use are refused by their paths.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { copyFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { httpCall } from "../harness/http-call.ts";
import { httpsGet } from "../harness/https-get.ts";
import { runNatsmon, spawnNatsmon, type NatsmonProcess, startupExample } from "../harness/natsmon-process.ts";
import { APP_USER, startTestServer, SYS_USER, type TestServer } from "../harness/start-nats-server.ts";
import { refusedAtStart } from "../harness/refused-config.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { makeTestCerts, type TestCerts } from "../harness/tls-certs.ts";
import { waitFor } from "../harness/wait-for.ts";

describe("a node and its clients on a nats-server that requires TLS and client certificates", () => {
  let dir: { path: string } & AsyncDisposable;
  let certs: TestCerts;
  let server: TestServer;
  let node: NatsmonProcess;
  let app: string[];

  /**
   * A gateway on the TLS bus (APP's user, the client certificate) serving HTTPS with `https`
   * flags, and its https base URL once it prints it.
   */
  async function httpsGateway(
    https: string[],
    env: Record<string, string> = {},
  ): Promise<{ gateway: NatsmonProcess; base: string }> {
    const tlsFlags = ["--tlsca", certs.ca, "--tlscert", certs.clientCert, "--tlskey", certs.clientKey];
    const gateway = spawnNatsmon(["gateway", ...app, ...tlsFlags, ...https, "--listen", "127.0.0.1:0"], env);
    try {
      const base = await waitFor(() => /listens at (https:\/\/[\d.:]*\d)/.exec(gateway.stdout())?.[1], {
        message: "the gateway to print its https URL",
      });
      return { gateway, base };
    } catch (err) {
      await gateway[Symbol.asyncDispose]();
      throw err;
    }
  }

  before(async () => {
    dir = await tempDir();
    certs = await makeTestCerts(dir.path);
    server = await startTestServer("tls", { extraConfig: certs.serverBlock({ verify: true }) });
    app = ["--server", server.url, "--user", APP_USER.user, "--password", APP_USER.password];
    const tls = `{ca: ${JSON.stringify(certs.ca)}, cert: ${JSON.stringify(certs.clientCert)}, key: ${JSON.stringify(certs.clientKey)}}`;
    const config = join(dir.path, "natsmon.yaml");
    await writeFile(
      config,
      [
        `node: {id: tlsn, data-dir: ${JSON.stringify(join(dir.path, "data"))}}`,
        `sink: {url: ${JSON.stringify(server.url)}, user: ${APP_USER.user}, password: ${APP_USER.password}, tls: ${tls}}`,
        // APP's user discovers services with the system's TLS files, inherited.
        `system: {id: tlssys, nats: {url: ${JSON.stringify(server.url)}, user: ${SYS_USER.user}, password: ${SYS_USER.password}, tls: ${tls}, ` +
          `accounts: [{name: APP, user: ${APP_USER.user}, password: ${APP_USER.password}}]}}`,
        "scraper: {interval: 1s}",
        "",
      ].join("\n"),
    );
    const checked = await runNatsmon(["config", "check", "--config", config]);
    assert.equal(checked.code, 0, checked.stdout + checked.stderr);
    node = spawnNatsmon(["run", "--config", config]);
    await node.waitForUrl();
  });

  after(async () => {
    await node?.[Symbol.asyncDispose]();
    await server?.[Symbol.asyncDispose]();
    await dir?.[Symbol.asyncDispose]();
  });

  test("the node scrapes and folds through TLS, and a client with the TLS flags reads what it folded", async () => {
    const tlsFlags = ["--tlsca", certs.ca, "--tlscert", certs.clientCert, "--tlskey", certs.clientKey];
    const answer = await waitFor(
      async () => {
        const r = await runNatsmon([
          "query",
          ...app,
          ...tlsFlags,
          "--format",
          "json",
          "SELECT server, version FROM hx.servers ORDER BY epoch DESC LIMIT 1",
        ]);
        return r.code === 0 && r.stdout.includes('"server"') ? r.stdout : undefined;
      },
      { timeoutMs: 60_000, message: "an epoch folded and queried over TLS" },
    );
    const [row] = JSON.parse(answer) as { server: string; version: string }[];
    assert.equal(row?.server, "tls");
    assert.match(row.version, /^\d+\.\d+\.\d+/);

    // The example the node prints names the sink's TLS files as flags.
    const example = startupExample(node);
    assert.ok(
      example?.includes(
        ` --tlsca ${certs.ca} --tlscert ${certs.clientCert} --tlskey ${certs.clientKey} "SELECT`,
      ),
      example,
    );
    await waitFor(() => node.stderr().includes('"msg":"connected to the account for service discovery"'), {
      message: "the APP account's connection, with the system's TLS files",
    });
    assert.doesNotMatch(node.stderr(), /"level":5\d/, "nothing logged as an error");
  });

  test("a node not given the CA of its monitored system logs which setting to give, and retries", async () => {
    await using nodeDir = await tempDir();
    const config = join(nodeDir.path, "natsmon.yaml");
    await writeFile(
      config,
      [
        `node: {id: noca, data-dir: ${JSON.stringify(join(nodeDir.path, "data"))}}`,
        "sink: {embedded: {port: -1}}",
        `system: {id: noca, nats: {url: ${JSON.stringify(server.url)}, user: ${SYS_USER.user}, password: ${SYS_USER.password}}}`,
        "",
      ].join("\n"),
    );
    await using noCa = spawnNatsmon(["run", "--config", config]);
    await waitFor(
      () =>
        noCa
          .stderr()
          .includes(
            "cannot connect to the monitored system; the server's certificate is not signed by a CA this machine " +
              "trusts: give the CA that signed it with system noca's nats.tls.ca; retrying",
          ),
      { message: "the scrape connection's TLS failure logged with its setting" },
    );
  });

  test("the client commands take the TLS files from NATS_CA, NATS_CERT and NATS_KEY too", async () => {
    const r = await runNatsmon(["systems", ...app], {
      NATS_CA: certs.ca,
      NATS_CERT: certs.clientCert,
      NATS_KEY: certs.clientKey,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^tlsn\s+\S+\s+tlssys\s+scrape,catalog\s+ok$/m);
  });

  test("the HTTP gateway reaches the bus through TLS with the same flags", async () => {
    const tlsFlags = ["--tlsca", certs.ca, "--tlscert", certs.clientCert, "--tlskey", certs.clientKey];
    await using gateway = spawnNatsmon(
      ["gateway", "--allow-unauthenticated", ...app, ...tlsFlags, "--listen", "127.0.0.1:0"],
      { NATSMON_GATEWAY_AUTH_TOKEN: "" },
    );
    const base = await waitFor(() => /listens at (http:\/\/[\d.:]*\d)/.exec(gateway.stdout())?.[1], {
      message: "the gateway to print its URL",
    });
    assert.equal((await httpCall(base, "/healthz")).status, 200);
    const query = await httpCall(base, "/sys/tlssys/db/query", {
      body: '{"sql":"SELECT count(*) > 0 AS folded FROM hx.epochs"}',
    });
    assert.equal(query.status, 200, query.text);
    assert.match(query.text, /"folded":true/);
  });

  test("the gateway serves HTTPS with --https-cert and --https-key, its bearer token over TLS", async () => {
    const token = "gw-https-token";
    const { gateway, base } = await httpsGateway(
      ["--https-cert", certs.serverCert, "--https-key", certs.serverKey],
      { NATSMON_GATEWAY_AUTH_TOKEN: token },
    );
    await using _ = gateway;
    const health = await httpsGet(`${base}/healthz`, certs.ca);
    assert.equal(health.status, 200, health.body);
    assert.equal((await httpsGet(`${base}/systems`, certs.ca)).status, 401);
    const systems = await httpsGet(`${base}/systems`, certs.ca, token);
    assert.equal(systems.status, 200, systems.body);
    assert.match(systems.body, /"systems":\[{"id":"tlssys"/, systems.body);
    // Plain HTTP on the HTTPS port gets no answer it can read.
    await assert.rejects(fetch(`${base.replace("https:", "http:")}/healthz`));

    assert.equal(health.served, "natsmon test server");
  });

  test("the gateway serves a renewed HTTPS certificate without a restart; a half-written pair leaves it as it was", async () => {
    const cert = join(dir.path, "gateway.pem");
    const key = join(dir.path, "gateway.key");
    await copyFile(certs.serverCert, cert);
    await copyFile(certs.serverKey, key);
    const { gateway, base } = await httpsGateway([
      "--allow-unauthenticated",
      "--https-cert",
      cert,
      "--https-key",
      key,
      "--https-check",
      "100ms",
    ]);
    await using _ = gateway;
    assert.equal((await httpsGet(`${base}/healthz`, certs.ca)).served, "natsmon test server");

    // The certificate renewed, its key not yet: the pair does not match.
    await copyFile(certs.server2Cert, cert);
    await waitFor(() => gateway.stderr().includes("the HTTPS files changed but cannot be used"), {
      message: "the gateway to warn of the half-written pair",
    });
    assert.ok(
      gateway.stderr().includes(`is not the private key of the certificate in ${cert}`),
      gateway.stderr(),
    );
    const during = await httpsGet(`${base}/healthz`, certs.ca);
    assert.equal(during.status, 200);
    assert.equal(during.served, "natsmon test server", "the served certificate is kept");

    await copyFile(certs.server2Key, key);
    await waitFor(() => gateway.stderr().includes("the gateway serves the renewed HTTPS certificate"), {
      message: "the gateway to serve the renewed certificate",
    });
    const after = await httpsGet(`${base}/healthz`, certs.ca);
    assert.equal(after.status, 200, after.body);
    assert.equal(after.served, "natsmon test server2");
  });

  test("with --https-client-ca the gateway serves only clients with a certificate that CA signed", async () => {
    const { gateway, base } = await httpsGateway([
      "--allow-unauthenticated",
      "--https-cert",
      certs.serverCert,
      "--https-key",
      certs.serverKey,
      "--https-client-ca",
      certs.ca,
    ]);
    await using _ = gateway;
    const client = { cert: certs.clientCert, key: certs.clientKey };
    const systems = await httpsGet(`${base}/systems`, certs.ca, undefined, client);
    assert.equal(systems.status, 200, systems.body);
    // Without a certificate the handshake fails, /healthz included: no route is reached.
    await assert.rejects(httpsGet(`${base}/healthz`, certs.ca));

    const alone = await runNatsmon(["gateway", "--allow-unauthenticated", "--https-client-ca", certs.ca]);
    assert.equal(alone.code, 2);
    assert.match(alone.stderr, /--https-client-ca needs --https-cert and --https-key/);
    const notCa = await runNatsmon([
      "gateway",
      "--allow-unauthenticated",
      "--https-cert",
      certs.serverCert,
      "--https-key",
      certs.serverKey,
      "--https-client-ca",
      certs.clientKey,
    ]);
    assert.equal(notCa.code, 2);
    assert.ok(
      notCa.stderr.includes(`--https-client-ca ${certs.clientKey} holds no PEM certificate`),
      notCa.stderr,
    );
  });

  test("the gateway refuses a half or mismatched HTTPS pair at start", async () => {
    const halfPair = await runNatsmon([
      "gateway",
      "--allow-unauthenticated",
      "--https-cert",
      certs.serverCert,
    ]);
    assert.equal(halfPair.code, 2);
    assert.match(halfPair.stderr, /--https-cert needs --https-key \(or NATSMON_GATEWAY_HTTPS_KEY\)/);
    const mismatch = await runNatsmon([
      "gateway",
      "--allow-unauthenticated",
      "--https-cert",
      certs.serverCert,
      "--https-key",
      certs.clientKey,
    ]);
    assert.equal(mismatch.code, 2);
    assert.ok(
      mismatch.stderr.includes(
        `--https-key ${certs.clientKey} is not the private key of the certificate in ${certs.serverCert}`,
      ),
      mismatch.stderr,
    );
  });

  test("a CA installed in the machine's trust store is trusted without --tlsca", async () => {
    // OpenSSL's store as the machine has it, moved here by SSL_CERT_FILE: just the test's CA.
    await using empty = await tempDir();
    const r = await runNatsmon(
      ["systems", ...app, "--tlscert", certs.clientCert, "--tlskey", certs.clientKey],
      {
        SSL_CERT_FILE: certs.ca,
        SSL_CERT_DIR: empty.path,
      },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^tlsn\s/m);
  });

  test("a client without the CA, with another CA, without a certificate, or asking TLS of a server without it is told what to give", async () => {
    const noCa = await runNatsmon(["systems", ...app]);
    assert.equal(noCa.code, 1);
    assert.match(
      noCa.stderr,
      /The server's certificate is not signed by a CA this machine trusts: give the CA that signed it with --tlsca FILE \(or NATS_CA\)\.\n$/,
    );
    const otherCa = await runNatsmon(["systems", ...app, "--tlsca", certs.otherCa]);
    assert.equal(otherCa.code, 1);
    assert.ok(
      otherCa.stderr.includes(`The server's certificate is not signed by the CA in ${certs.otherCa}: `),
      otherCa.stderr,
    );
    const noCert = await runNatsmon(["systems", ...app, "--tlsca", certs.ca]);
    assert.equal(noCert.code, 1);
    assert.match(
      noCert.stderr,
      /A server that verifies clients \(tls verify\) drops one without a certificate: give one with --tlscert FILE and --tlskey FILE \(or NATS_CERT and NATS_KEY\)\.\n$/,
    );
    await using plain = await startTestServer("plain");
    const noTls = await runNatsmon(["systems", "--server", plain.url, "--tlsca", certs.ca]);
    assert.equal(noTls.code, 1);
    assert.match(
      noTls.stderr,
      /server does not support 'tls'\. The server offers no TLS: give the URL of a listener with TLS, or leave out --tlsca FILE/,
    );
    const halfPair = await runNatsmon([
      "systems",
      ...app,
      "--tlsca",
      certs.ca,
      "--tlscert",
      certs.clientCert,
    ]);
    assert.equal(halfPair.code, 2);
    assert.match(
      halfPair.stderr,
      /^error: --tlscert \(or NATS_CERT\) needs --tlskey \(or NATS_KEY\): the certificate's private key\n/,
    );
  });
});

test("TLS files start-up cannot use are refused by their paths, before anything starts", async () => {
  await using dir = await tempDir();
  const certs = await makeTestCerts(dir.path);
  const notPem = join(dir.path, "not-a-cert.pem");
  await writeFile(notPem, "hello\n");
  const file = join(dir.path, "natsmon.yaml");
  await writeFile(
    file,
    [
      `node: {data-dir: ${JSON.stringify(join(dir.path, "data"))}}`,
      // The server's key is sound, but it is not the key of the client certificate.
      `sink: {url: nats://127.0.0.1:4999, tls: {ca: ${notPem}, cert: ${certs.clientCert}, key: ${certs.serverKey}}}`,
      "system:",
      "  id: prod",
      "  nats:",
      "    url: tls://127.0.0.1:4999",
      `    tls: {ca: /nonexistent/ca.pem, cert: ${certs.clientCert}}`,
      `    accounts: [{name: APP, user: app, tls: {cert: ${certs.clientCert}, key: ${certs.encryptedClientKey}}}]`,
      "",
    ].join("\n"),
  );
  const errors = [
    "sink.tls.ca: " + notPem + " holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
    `sink.tls.key: ${certs.serverKey} is not the private key of the certificate in sink.tls.cert (${certs.clientCert})`,
    "system.nats.tls.key: is required with tls.cert",
    "system.nats.tls.ca: /nonexistent/ca.pem does not exist",
    `system.nats.accounts[0].tls.key: ${certs.encryptedClientKey} holds an encrypted key; natsmon needs it ` +
      "unencrypted (openssl pkey -in KEY -out KEY.plain), readable by its user only",
  ];
  await refusedAtStart(file, errors);
});
