/**
 * A real node, configured by its YAML file, delivers a finding to Debian's Alertmanager behind
 * mutual TLS through Debian's tinyproxy: the endpoint's `tls` and `proxy-url` on the node's
 * own sender, end to end (jetstream-003 fires for a full stream and is active in the
 * Alertmanager, having gone through the proxy's CONNECT tunnel). It has `headers` too, which
 * Alertmanager ignores; their arrival is checked against an HTTP receiver in
 * test/integration/notify/endpoint-headers.test.ts.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { sqlQuery } from "../harness/api-client.ts";
import { spawnLocalNode } from "../harness/local-node.ts";
import { requiringClientCerts, startAlertmanager } from "../harness/start-alertmanager.ts";
import { startTinyproxy } from "../harness/start-tinyproxy.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { makeTestCerts } from "../harness/tls-certs.ts";
import { waitFor } from "../harness/wait-for.ts";

test("a node's alertmanager endpoint with tls, proxy-url and headers delivers a finding", async () => {
  await using dir = await tempDir();
  await using certDir = await tempDir();
  const certs = await makeTestCerts(certDir.path);
  await using am = await startAlertmanager({ tls: requiringClientCerts(certs) });
  await using proxy = await startTinyproxy();

  const endpoint = [
    `{name: am, url: ${JSON.stringify(am.url)}, subscriptions: ["jetstream-003"],`,
    `  tls: {ca: ${certs.ca}, cert: ${certs.clientCert}, key: ${certs.clientKey}},`,
    `  proxy-url: ${JSON.stringify(proxy.url)}, headers: {X-Scope-OrgID: east}}`,
  ].join(" ");
  const { nc, node } = await spawnLocalNode(dir.path, ["notifications:", `  alertmanager: [${endpoint}]`]);
  try {
    await waitFor(
      async () =>
        (await sqlQuery<{ n: number }>(nc, "local", "SELECT count(*) AS n FROM hx.check_runs"))[0]!.n >= 1,
      { timeoutMs: 30_000, message: "a first checked epoch (the baseline)" },
    );
    // A stream at its message limit fires jetstream-003.
    await (await jetstreamManager(nc)).streams.add({ name: "FULL", subjects: ["full.>"], max_msgs: 10 });
    const js = jetstream(nc);
    for (let i = 0; i < 10; i++) await js.publish(`full.${i}`, "x");

    const [alert] = await waitFor(
      async () => {
        const found = await am.alerts('alertname="jetstream-003"');
        return found.length > 0 && found;
      },
      { timeoutMs: 60_000, message: "jetstream-003 active in the Alertmanager behind mutual TLS" },
    );
    assert.equal(alert!.labels.system, "local");
    assert.match(alert!.annotations.entity_name ?? "", /FULL$/);
    assert.match(await proxy.log(), new RegExp(`CONNECT ${new URL(am.url).host} HTTP`), "through the proxy");
  } finally {
    await nc.close();
    await node.kill("SIGTERM");
  }
});
