/**
 * A finding already firing reaches endpoints configured after it fired (README: "A new endpoint
 * starts with what is firing now"; spec: Notification deliveries 3): a real node with no
 * endpoints sees jetstream-003 fire for a full stream, and is restarted with a webhook and an
 * alertmanager endpoint; both get the finding, with no new transition of it.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { WebhookMessage } from "../../src/protocol/index.ts";
import { sqlQuery } from "../harness/api-client.ts";
import { startHttpReceiver } from "../harness/http-receiver.ts";
import { spawnLocalNode } from "../harness/local-node.ts";
import { startAlertmanager } from "../harness/start-alertmanager.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

const FIRING_SQL = "SELECT count(*) AS n FROM hx.findings_firing WHERE code = 'jetstream-003'";

test("endpoints added at a restart get the finding that fired while the node had none", async () => {
  await using dir = await tempDir();
  await using receiver = await startHttpReceiver();
  await using am = await startAlertmanager();

  const first = await spawnLocalNode(dir.path);
  try {
    await waitFor(
      async () =>
        (await sqlQuery<{ n: number }>(first.nc, "local", "SELECT count(*) AS n FROM hx.check_runs"))[0]!.n >=
        1,
      { timeoutMs: 30_000, message: "a first checked epoch (the baseline)" },
    );
    // A stream at its message limit fires jetstream-003.
    await (
      await jetstreamManager(first.nc)
    ).streams.add({ name: "FULL", subjects: ["full.>"], max_msgs: 10 });
    const js = jetstream(first.nc);
    for (let i = 0; i < 10; i++) await js.publish(`full.${i}`, "x");
    await waitFor(async () => (await sqlQuery<{ n: number }>(first.nc, "local", FIRING_SQL))[0]!.n === 1, {
      timeoutMs: 30_000,
      message: "jetstream-003 firing",
    });
  } finally {
    await first.nc.close();
    await first.node.kill("SIGTERM");
  }

  const second = await spawnLocalNode(dir.path, [
    "notifications:",
    `  webhook: [{name: hook, url: ${JSON.stringify(`${receiver.url}/hook`)}, subscriptions: ["jetstream-003"]}]`,
    `  alertmanager: [{name: am, url: ${JSON.stringify(am.url)}, subscriptions: ["jetstream-003"]}]`,
  ]);
  try {
    const delivered = await waitFor(
      () =>
        receiver.requests
          .map((r) => r.json() as WebhookMessage)
          .flatMap((m) => m.alerts)
          .find((a) => a.labels.alertname === "jetstream-003"),
      { timeoutMs: 60_000, message: "jetstream-003 at the webhook" },
    );
    assert.equal(delivered.status, "firing");
    assert.match(delivered.annotations.entity_name ?? "", /FULL$/);
    const [alert] = await waitFor(
      async () => {
        const found = await am.alerts('alertname="jetstream-003"');
        return found.length > 0 && found;
      },
      { timeoutMs: 60_000, message: "jetstream-003 active in the Alertmanager" },
    );
    assert.equal(alert!.labels.system, "local");
    assert.equal((await sqlQuery<{ n: number }>(second.nc, "local", FIRING_SQL))[0]!.n, 1, "still firing");
  } finally {
    await second.nc.close();
    await second.node.kill("SIGTERM");
  }
});
