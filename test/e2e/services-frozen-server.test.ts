/**
 * The server natsmon's service discovery connection for APP is on freezes (SIGSTOP) while the
 * service's own instance, on another server, keeps running (the audit's service-002 false
 * positive). The frozen epochs name APP and why in hx.epochs.errors, service-002 never fires,
 * and the discovery connection moves to a server that answers, so the service is found again
 * while the server is still frozen. Real 3-node cluster, real natsmon process.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { Svcm } from "@nats-io/services";
import { sqlQuery } from "../harness/api-client.ts";
import { spawnNatsmon, writeMonitorConfig } from "../harness/natsmon-process.ts";
import { startTestCluster } from "../harness/start-nats-cluster.ts";
import { APP_USER, SYS_USER } from "../harness/start-nats-server.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

/** The first epoch after `after` (a TIMESTAMPTZ literal) that `where` holds for, if any yet. */
async function epochWhere(bus: NatsConnection, after: string, where: string): Promise<string | undefined> {
  const rows = await sqlQuery<{ epoch: string }>(
    bus,
    "east",
    `SELECT min(e.epoch)::VARCHAR AS epoch FROM hx.epochs e WHERE e.epoch > '${after}'::TIMESTAMPTZ AND ${where}`,
  );
  return rows[0]?.epoch ?? undefined;
}

/** APP was gathered in epoch e and its echo instance counted. */
const ECHO_FOUND =
  "list_contains(e.service_accounts, 'APP') AND " +
  "EXISTS (SELECT 1 FROM hx.services s WHERE s.epoch = e.epoch AND s.account = 'APP' AND s.service = 'echo')";

test("a frozen server under natsmon's discovery connection is an epoch error, not service-002, and discovery moves on", async () => {
  await using cluster = await startTestCluster();
  await using dir = await tempDir();
  const [n1, n2] = [cluster.nodes[0]!, cluster.nodes[1]!];
  // The service runs on n2; natsmon is given n1 only, so its connections start there.
  const app = await connect({ servers: n2.url, user: APP_USER.user, pass: APP_USER.password });
  const echo = await new Svcm(app).add({ name: "echo", version: "1.0.0" });
  echo.addEndpoint("echo", { subject: "echo", handler: (_err, msg) => msg.respond(msg.data) });
  const config = await writeMonitorConfig({
    path: join(dir.path, "natsmon.yaml"),
    dataDir: join(dir.path, "data"),
    system: "east",
    url: n1.url,
    user: SYS_USER,
    scraper: "interval: 2s",
    accounts: [{ name: "APP", user: APP_USER.user, password: APP_USER.password }],
  });
  await using node = spawnNatsmon(["run", "--config", config]);
  const bus = await connect({ servers: await node.waitForUrl() });
  try {
    const found = await waitFor(() => epochWhere(bus, "-infinity", ECHO_FOUND), {
      timeoutMs: 60_000,
      message: "an epoch that found echo",
    });
    n1.pause();
    let blind: string;
    let again: string;
    try {
      blind = await waitFor(
        () =>
          epochWhere(
            bus,
            found,
            "NOT list_contains(e.service_accounts, 'APP') AND " +
              "len(list_filter(e.errors, x -> x LIKE 'services: services of account APP: no answer to $SRV.INFO%')) > 0",
          ),
        { timeoutMs: 60_000, message: "an epoch whose APP discovery got no answer" },
      );
      again = await waitFor(() => epochWhere(bus, blind, ECHO_FOUND), {
        timeoutMs: 90_000,
        message: "echo found again through a server that answers, n1 still frozen",
      });
    } finally {
      n1.resume();
    }
    const checked = `SELECT count(*) AS n FROM hx.check_runs WHERE epoch >= '${again}'::TIMESTAMPTZ`;
    await waitFor(async () => Number((await sqlQuery<{ n: number }>(bus, "east", checked))[0]?.n) > 0, {
      timeoutMs: 60_000,
      message: "the checks ran over the epoch echo was found again",
    });
    const fired = await sqlQuery<{ epoch: string }>(
      bus,
      "east",
      "SELECT epoch::VARCHAR AS epoch FROM hx.check_findings WHERE code = 'service-002'",
    );
    assert.deepEqual(fired, [], "echo never stopped");
  } finally {
    await bus.close();
    await echo.stop();
    await app.close();
  }
});
