/**
 * The checks of a `tls` setting's PEM files on certificates made by openssl, the TLS of a
 * system's service-discovery accounts, and the settings' forms as the schema takes them.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { readFile } from "node:fs/promises";
import { loadConfig } from "../../../src/config/index.ts";
import { caProblem, certProblem, keyMatchesCert, keyProblem } from "../../../src/config/tls-files.ts";
import { accountTls } from "../../../src/node/service-accounts.ts";
import { tempDir } from "../../harness/temp-dir.ts";
import { makeTestCerts } from "../../harness/tls-certs.ts";

test("PEM files: a CA bundle, a certificate valid now, an unencrypted key of that certificate", async () => {
  await using dir = await tempDir();
  const certs = await makeTestCerts(dir.path);
  const ca = await readFile(certs.ca);
  const other = await readFile(certs.otherCa);
  const cert = await readFile(certs.clientCert);
  const key = await readFile(certs.clientKey);
  const serverKey = await readFile(certs.serverKey);
  const encrypted = await readFile(certs.encryptedClientKey);

  assert.equal(caProblem(ca), undefined);
  assert.equal(caProblem(Buffer.concat([ca, other])), undefined, "a bundle of two CAs");
  const broken = Buffer.from(
    `${ca.toString()}-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n`,
  );
  assert.match(caProblem(broken) ?? "", /^certificate 2 of 2: holds a certificate that cannot be read/);
  assert.equal(caProblem(key), "holds no PEM certificate (-----BEGIN CERTIFICATE-----)");

  assert.equal(certProblem(cert), undefined);
  const x509 = new X509Certificate(cert);
  const later = new Date(new Date(x509.validTo).getTime() + 1000);
  assert.match(
    certProblem(cert, later) ?? "",
    /^holds a certificate that expired on .+Z \(CN=natsmon test client\); renew it$/,
  );
  const earlier = new Date(new Date(x509.validFrom).getTime() - 60_000);
  assert.match(
    certProblem(cert, earlier) ?? "",
    /^holds a certificate not valid before .+; check this host's clock$/,
  );

  assert.equal(keyProblem(key), undefined);
  assert.match(keyProblem(encrypted) ?? "", /^holds an encrypted key; natsmon needs it unencrypted/);
  assert.match(keyProblem(cert) ?? "", /^holds no private key natsmon can read \(PEM\)/);

  assert.equal(keyMatchesCert(cert, key), true);
  assert.equal(keyMatchesCert(cert, serverKey), false);
});

test("a service-discovery account inherits the system's CA, and its certificate unless it has its own", () => {
  const system = { ca: "ca.pem", cert: "sys.pem", key: "sys.key" };
  assert.deepEqual(accountTls(system, undefined), system);
  assert.deepEqual(accountTls(system, { cert: "app.pem", key: "app.key" }), {
    ca: "ca.pem",
    cert: "app.pem",
    key: "app.key",
  });
  assert.deepEqual(accountTls({ ca: "ca.pem" }, { ca: "app-ca.pem" }), { ca: "app-ca.pem" });
  assert.equal(accountTls(undefined, undefined), undefined);
  assert.deepEqual(accountTls(undefined, { cert: "app.pem", key: "app.key" }), {
    cert: "app.pem",
    key: "app.key",
  });
});

test("tls settings: a certificate without its key, or a key without its certificate, is refused by its path; empty is unset", async () => {
  const result = await loadConfig({
    env: {
      NATSMON_SINK_URL: "nats://127.0.0.1:4222",
      NATSMON_SINK_TLS_CERT: "/nonexistent/client.pem",
      NATSMON_SYSTEM_ID: "prod",
      NATSMON_SYSTEM_NATS_URL: "tls://127.0.0.1:4222",
      NATSMON_SYSTEM_NATS_TLS_KEY: "/nonexistent/client.key",
      NATSMON_SYSTEM_NATS_TLS_CA: "",
    },
  });
  assert.equal(result.ok, false);
  const paths = result.ok ? [] : result.errors.map((e) => `${e.path}: ${e.message}`);
  assert.ok(paths.includes("sink.tls.key: is required with tls.cert"), paths.join("\n"));
  assert.ok(paths.includes("system.nats.tls.cert: is required with tls.key"), paths.join("\n"));
  assert.ok(!paths.some((p) => p.startsWith("system.nats.tls.ca")), "an empty CA is no CA");
});
