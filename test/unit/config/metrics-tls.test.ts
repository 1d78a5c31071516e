/**
 * node.metrics-tls as `natsmon run` and `natsmon config check` load it: from the file or the
 * environment, its files checked by their paths at start-up (certificates made by openssl),
 * a key that is not the certificate's refused, and the block refused without
 * node.metrics-listen or without its certificate or key.
 */
import { before, after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { loadConfig, type ConfigResult } from "../../../src/config/index.ts";
import { tempDir } from "../../harness/temp-dir.ts";
import { makeTestCerts, type TestCerts } from "../../harness/tls-certs.ts";

const errors = (r: ConfigResult): string[] => (r.ok ? [] : r.errors.map((e) => `${e.path}: ${e.message}`));

describe("node.metrics-tls", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let certs: TestCerts;
  const load = async (node: string, env: Record<string, string> = {}) => {
    const file = join(dir.path, "natsmon.yaml");
    await writeFile(file, [`node: {${node}}`, "system: {id: east}", ""].join("\n"));
    return loadConfig({ file, env });
  };
  const listen = `metrics-listen: "127.0.0.1:0"`;

  before(async () => {
    dir = await tempDir();
    certs = await makeTestCerts(dir.path);
  });
  after(async () => dir?.[Symbol.asyncDispose]());

  test("a certificate, its key and a client CA are taken from the file, the check interval defaulting to 1m", async () => {
    const result = await load(
      `${listen}, metrics-tls: {cert: ${certs.serverCert}, key: ${certs.serverKey}, client-ca: ${certs.ca}}`,
    );
    assert.ok(result.ok, errors(result).join("\n"));
    assert.deepEqual(result.config.node.metricsTls, {
      cert: certs.serverCert,
      key: certs.serverKey,
      clientCa: certs.ca,
      checkMs: 60_000,
    });
    const plain = await load(listen);
    assert.ok(plain.ok);
    assert.equal(plain.config.node.metricsTls, undefined);
  });

  test("the environment sets each of them", async () => {
    const result = await load(listen, {
      NATSMON_NODE_METRICS_TLS_CERT: certs.serverCert,
      NATSMON_NODE_METRICS_TLS_KEY: certs.serverKey,
      NATSMON_NODE_METRICS_TLS_CHECK: "10s",
    });
    assert.ok(result.ok, errors(result).join("\n"));
    assert.deepEqual(result.config.node.metricsTls, {
      cert: certs.serverCert,
      key: certs.serverKey,
      checkMs: 10_000,
    });
  });

  test("files that cannot serve are refused by their paths", async () => {
    const missing = join(dir.path, "missing.pem");
    const cases: [string, RegExp][] = [
      [`cert: ${missing}, key: ${certs.serverKey}`, /^node\.metrics-tls\.cert: .*does not exist/m],
      [
        `cert: ${certs.serverKey}, key: ${certs.serverKey}`,
        /^node\.metrics-tls\.cert: .*holds no PEM certificate/m,
      ],
      [`cert: ${certs.serverCert}, key: ${certs.serverCert}`, /^node\.metrics-tls\.key: /m],
      [
        `cert: ${certs.serverCert}, key: ${certs.server2Key}`,
        /^node\.metrics-tls\.key: .*is not the private key of the certificate in node\.metrics-tls\.cert/m,
      ],
      [
        `cert: ${certs.serverCert}, key: ${certs.serverKey}, client-ca: ${certs.clientKey}`,
        /^node\.metrics-tls\.client-ca: .*holds no PEM certificate/m,
      ],
      [
        `cert: ${certs.serverCert}, key: ${certs.serverKey}, check: 10ms`,
        /^node\.metrics-tls\.check: must be at least 100ms/m,
      ],
    ];
    for (const [tls, message] of cases) {
      const result = await load(`${listen}, metrics-tls: {${tls}}`);
      assert.ok(!result.ok, tls);
      assert.match(errors(result).join("\n"), message, tls);
    }
  });

  test("a block without its certificate or key, or without metrics-listen, is refused", async () => {
    const halves = await load(`${listen}, metrics-tls: {client-ca: ${certs.ca}}`);
    assert.match(errors(halves).join("\n"), /^node\.metrics-tls\.cert: is required/m);
    assert.match(errors(halves).join("\n"), /^node\.metrics-tls\.key: is required/m);
    const alone = await load(`metrics-tls: {cert: ${certs.serverCert}, key: ${certs.serverKey}}`);
    assert.match(errors(alone).join("\n"), /^node\.metrics-tls: .*served only with node\.metrics-listen/m);
  });
});
