/**
 * GET /metrics over HTTPS with node.metrics-tls, on a real node with certificates made by
 * openssl: the node prints its https URL; a client with a certificate the client CA signed
 * gets the metrics, one without is refused in the handshake, and plain HTTP gets nothing;
 * Debian's real Prometheus scrapes it with `tls_config`; a renewed certificate is served
 * without a restart, and a half-written pair leaves the served one as it was.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { copyFile } from "node:fs/promises";
import { join } from "node:path";
import { httpsGet } from "../harness/https-get.ts";
import { spawnMetricsNode, type NatsmonProcess } from "../harness/natsmon-process.ts";
import { startPrometheus } from "../harness/start-prometheus.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { makeTestCerts, type TestCerts } from "../harness/tls-certs.ts";
import { waitFor } from "../harness/wait-for.ts";

describe("GET /metrics over HTTPS with node.metrics-tls", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let certs: TestCerts;
  let node: NatsmonProcess;
  let url: string;
  let cert: string;
  let key: string;
  const client = () => ({ cert: certs.clientCert, key: certs.clientKey });

  before(async () => {
    dir = await tempDir();
    certs = await makeTestCerts(dir.path);
    // Copies, so that the renewal test can replace them.
    cert = join(dir.path, "metrics.pem");
    key = join(dir.path, "metrics.key");
    await copyFile(certs.serverCert, cert);
    await copyFile(certs.serverKey, key);
    ({ node, url } = await spawnMetricsNode(join(dir.path, "data"), {
      NATSMON_NODE_METRICS_TLS_CERT: cert,
      NATSMON_NODE_METRICS_TLS_KEY: key,
      NATSMON_NODE_METRICS_TLS_CLIENT_CA: certs.ca,
      NATSMON_NODE_METRICS_TLS_CHECK: "100ms",
    }));
  });

  after(async () => {
    await node?.kill("SIGTERM");
    await dir?.[Symbol.asyncDispose]();
  });

  test("a client with a certificate the client CA signed gets the metrics; without one, or over plain HTTP, nothing", async () => {
    assert.match(url, /^https:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const answer = await httpsGet(url, certs.ca, undefined, client());
    assert.equal(answer.status, 200);
    assert.equal(answer.served, "natsmon test server");
    assert.match(answer.body, /^natsmon_data_dir_free_bytes\{node_id="local"\} \d+$/m);
    // The second client certificate the CA signed will do as well.
    const other = await httpsGet(url, certs.ca, undefined, {
      cert: certs.client2Cert,
      key: certs.client2Key,
    });
    assert.equal(other.status, 200);
    await assert.rejects(httpsGet(url, certs.ca), "no client certificate: refused in the handshake");
    await assert.rejects(fetch(url.replace("https:", "http:")), "plain HTTP gets no answer");
  });

  test("a real Prometheus scrapes it over HTTPS with its tls_config", async () => {
    await using prometheus = await startPrometheus([new URL(url).host], {
      tls: { caFile: certs.ca, certFile: certs.clientCert, keyFile: certs.clientKey },
    });
    await waitFor(
      async () =>
        (await prometheus.query('up{job="natsmon"} == 1')).length === 1 &&
        (await prometheus.query("natsmon_data_dir_free_bytes")).length > 0,
      { timeoutMs: 30_000, message: "Prometheus to scrape the node over HTTPS" },
    );
  });

  test("a renewed certificate is served without a restart; a half-written pair leaves the served one as it was", async () => {
    // The certificate renewed, its key not yet: the pair does not match.
    await copyFile(certs.server2Cert, cert);
    await waitFor(() => node.stderr().includes("the HTTPS files changed but cannot be used"), {
      message: "the node to warn of the half-written pair",
    });
    assert.ok(node.stderr().includes(`node.metrics-tls.key ${key} is not the private key`), node.stderr());
    const during = await httpsGet(url, certs.ca, undefined, client());
    assert.equal(during.status, 200);
    assert.equal(during.served, "natsmon test server", "the served certificate is kept");

    await copyFile(certs.server2Key, key);
    await waitFor(() => node.stderr().includes("GET /metrics serves the renewed HTTPS certificate"), {
      message: "the node to serve the renewed certificate",
    });
    const renewed = await httpsGet(url, certs.ca, undefined, client());
    assert.equal(renewed.status, 200);
    assert.equal(renewed.served, "natsmon test server2");
  });
});
