/**
 * A notification endpoint's `tls` and `proxy-url` as `natsmon run` and `natsmon config check`
 * load them: the files are checked by their paths at start-up, an http url with tls is
 * refused, empty values are unset, and a proxy-url must be a proxy's http address.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { loadConfig, type ConfigResult } from "../../../src/config/index.ts";
import { tempDir } from "../../harness/temp-dir.ts";
import { makeTestCerts, type TestCerts } from "../../harness/tls-certs.ts";

async function load(dir: string, endpointLines: string[]): Promise<ConfigResult> {
  const file = join(dir, "natsmon.yaml");
  const yaml = [
    "system: {id: east}",
    "notifications:",
    "  alertmanager:",
    "    - name: am",
    ...endpointLines.map((l) => `      ${l}`),
    '      subscriptions: ["*"]',
    "",
  ].join("\n");
  await writeFile(file, yaml);
  return loadConfig({ file });
}
const errors = (r: ConfigResult): string[] => (r.ok ? [] : r.errors.map((e) => `${e.path}: ${e.message}`));

describe("a notification endpoint's tls files", () => {
  const AT = "notifications.alertmanager[0]";
  const withCerts = async (fn: (certs: TestCerts, dir: string) => Promise<void>) => {
    await using dir = await tempDir();
    await fn(await makeTestCerts(dir.path), dir.path);
  };

  test("a CA and a client certificate with its key are taken, and reach the endpoint's settings", () =>
    withCerts(async (certs, dir) => {
      const result = await load(dir, [
        "url: https://am.example.com:9093",
        `tls: {ca: ${certs.ca}, cert: ${certs.clientCert}, key: ${certs.clientKey}}`,
      ]);
      assert.ok(result.ok, errors(result).join("\n"));
      assert.deepEqual(result.config.notifications.endpoints[0]!.tls, {
        ca: certs.ca,
        cert: certs.clientCert,
        key: certs.clientKey,
      });
    }));

  test("empty values are unset: the endpoint has no tls", () =>
    withCerts(async (_, dir) => {
      const result = await load(dir, [
        "url: https://am.example.com:9093",
        'tls: {ca: "", cert: "", key: ""}',
      ]);
      assert.ok(result.ok, errors(result).join("\n"));
      assert.equal(result.config.notifications.endpoints[0]!.tls, undefined);
    }));

  test("each faulty file, and tls on an http url, is refused by its path", () =>
    withCerts(async (certs, dir) => {
      const missing = join(dir, "missing.pem");
      assert.deepEqual(
        errors(
          await load(dir, [
            "url: https://am.example.com:9093",
            `tls: {ca: ${missing}, cert: ${certs.clientCert}, key: ${certs.serverKey}}`,
          ]),
        ),
        [
          `${AT}.tls.ca: ${missing} does not exist`,
          `${AT}.tls.key: ${certs.serverKey} is not the private key of the certificate in ${AT}.tls.cert (${certs.clientCert})`,
        ],
      );
      assert.deepEqual(
        errors(await load(dir, ["url: https://am.example.com:9093", `tls: {ca: ${certs.clientKey}}`])),
        [`${AT}.tls.ca: ${certs.clientKey} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`],
      );
      assert.deepEqual(
        errors(await load(dir, ["url: https://am.example.com:9093", `tls: {cert: ${certs.clientCert}}`])),
        [`${AT}.tls.key: is required with tls.cert`],
      );
      assert.deepEqual(
        errors(await load(dir, ["url: http://am.example.com:9093", `tls: {ca: ${certs.ca}}`])),
        [
          `${AT}.tls: is set, but the url is http://, which has no TLS: give the https:// URL of the receiver, or leave tls out`,
        ],
      );
    }));
});

describe("a notification endpoint's proxy-url", () => {
  const AT = "notifications.alertmanager[0]";
  test("an http proxy, with or without credentials, reaches the endpoint's settings", async () => {
    await using dir = await tempDir();
    for (const proxy of ["http://proxy.example.com:3128", "http://natsmon:s3cret@proxy.example.com:3128/"]) {
      const result = await load(dir.path, ["url: https://am.example.com:9093", `proxy-url: "${proxy}"`]);
      assert.ok(result.ok, errors(result).join("\n"));
      assert.equal(result.config.notifications.endpoints[0]!.proxyUrl, proxy);
    }
  });

  test("a proxy-url that is not a proxy's address is refused by its path", async () => {
    await using dir = await tempDir();
    const refused = async (proxy: string) =>
      errors(await load(dir.path, ["url: https://am.example.com:9093", `proxy-url: "${proxy}"`]));
    const NOT_HTTP = "must be the proxy's http URL, e.g. http://proxy.example.com:3128";
    assert.deepEqual(await refused("proxy.example.com:3128"), [`${AT}.proxy-url: ${NOT_HTTP}`]);
    assert.deepEqual(await refused("socks5://proxy.example.com:1080"), [`${AT}.proxy-url: ${NOT_HTTP}`]);
    // WHATWG parsing makes proxy.example.com the host of these; the text names none.
    assert.deepEqual(await refused("http:///proxy.example.com:3128"), [`${AT}.proxy-url: ${NOT_HTTP}`]);
    assert.deepEqual(await refused("http:proxy.example.com:3128"), [`${AT}.proxy-url: ${NOT_HTTP}`]);
    assert.deepEqual(await refused("http://proxy.example.com:3128/alerts"), [
      `${AT}.proxy-url: must be the proxy's address alone, without a path (http://host:port)`,
    ]);
  });
});

describe("a notification endpoint's headers", () => {
  const AT = "notifications.alertmanager[0]";
  test("headers of the endpoint's own reach its settings; Authorization is free without auth-type", async () => {
    await using dir = await tempDir();
    const result = await load(dir.path, [
      "url: https://mimir.example.com/alertmanager",
      'headers: {X-Scope-OrgID: tenant-1, Authorization: "GenieKey abc"}',
    ]);
    assert.ok(result.ok, errors(result).join("\n"));
    assert.deepEqual(result.config.notifications.endpoints[0]!.headers, {
      "X-Scope-OrgID": "tenant-1",
      Authorization: "GenieKey abc",
    });
  });

  test("a header that cannot be sent, or that natsmon or the auth-type sets, is refused by its path", async () => {
    await using dir = await tempDir();
    const result = await load(dir.path, [
      "url: https://am.example.com",
      "auth-type: bearer",
      "auth-token: t0ken",
      "headers:",
      '  "X Tenant": a',
      '  X-Secret: "line\\n"',
      "  Content-Type: text/plain",
      "  authorization: Basic x",
      "  X-Scope-OrgID: one",
      "  x-scope-orgid: two",
      "  Proxy-Authorization: Basic y",
    ]);
    assert.deepEqual(errors(result), [
      `${AT}.headers.X Tenant: is not a header name: letters, digits and !#$%&'*+-.^_\`|~ only`,
      `${AT}.headers.X-Secret: must be ASCII without control characters but tab, as a header value; it has a ` +
        "line feed (U+000A) at character 5: a YAML block scalar (|) keeps its final line break; write |- or quote the value",
      `${AT}.headers.Content-Type: cannot be set here: natsmon sets it (application/json)`,
      `${AT}.headers.authorization: cannot be set here: auth-type bearer sets it; leave auth-type out to send an ` +
        "Authorization header of your own",
      `${AT}.headers.x-scope-orgid: is X-Scope-OrgID again: header names are the same in any case`,
      `${AT}.headers.Proxy-Authorization: cannot be set here: give the proxy's credentials in proxy-url ` +
        "(http://USER:PASSWORD@host:port)",
    ]);
  });
});
