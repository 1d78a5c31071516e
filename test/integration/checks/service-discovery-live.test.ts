/**
 * service-002 against natsmon's own discovery failing, on a real 2.9.10 cluster: the server
 * that natsmon's APP discovery connection is on freezes (SIGSTOP) while the service's
 * instance, on another server, keeps running. The epoch names the account and why in its
 * errors and service-002 says nothing; once the server answers again the service is found,
 * and a service that really stops still fires. A discovery user the server refuses `$SRV.*`
 * is named the same way, not taken for an account without services.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import { startNatsServer } from "../../../src/bus/index.ts";
import type { NatsConnection } from "@nats-io/nats-core";
import { Svcm } from "@nats-io/services";
import { CHECKS, type Check } from "../../../src/checks/index.ts";
import { SOURCES, type ServiceAccount } from "../../../src/scrape/index.ts";
import { APP_USER } from "../../harness/start-nats-server.ts";
import { tempDir } from "../../harness/temp-dir.ts";
import { scrapeOneEpoch } from "../catalog/live-scrape.ts";
import { runFixture, type FixtureEpoch } from "./check-harness.ts";
import { startLiveCluster, type LiveCluster } from "./live-fixture.ts";

const service002: Check = CHECKS.find((c) => c.code === "service-002")!;
const VARZ = SOURCES.filter((s) => s.name === "varz");

describe("service-002 when natsmon's discovery connection is on a frozen server", () => {
  let live: LiveCluster;
  /** natsmon's discovery connection in APP, on n1 only. */
  let discovery: NatsConnection;
  const appAccount: ServiceAccount = { name: "APP", connection: () => Promise.resolve(discovery) };

  /** One epoch scraped through n2, APP's services asked through n1: its replies and errors. */
  async function scrape(): Promise<{ epoch: FixtureEpoch; errors: string[]; instances: number }> {
    const { marker, replies } = await scrapeOneEpoch(live.sys, VARZ, { accounts: [appAccount] });
    const app = replies.find((r) => r.source === "services" && r.server === "APP");
    const body = app?.body as { data?: { services?: unknown[] } } | undefined;
    return {
      epoch: { replies, marker: { servers_expected: ["n1", "n2", "n3"] } },
      errors: marker.errors.filter((e) => e.source === "services").map((e) => e.error),
      instances: app ? (body?.data?.services?.length ?? 0) : -1,
    };
  }

  before(async () => {
    // The scrape connection and the service's own connection are on n2.
    live = await startLiveCluster({ sources: ["varz"], connectTo: ["n2"] });
    const n1 = live.cluster.nodes[0]!;
    discovery = await connect({ servers: n1.url, user: APP_USER.user, pass: APP_USER.password });
  });

  after(async () => {
    await discovery?.close();
    await live?.close();
  });

  test("a discovery that got no answer is an epoch error naming the account, and no service is judged down", async () => {
    const n1 = live.cluster.nodes[0]!;
    const echo = await new Svcm(live.app).add({ name: "echo", version: "1.0.0" });
    echo.addEndpoint("echo", { subject: "echo", handler: (_err, msg) => msg.respond(msg.data) });
    try {
      const up = await scrape();
      assert.deepEqual([up.instances, up.errors], [1, []]);

      n1.pause();
      let frozen: Awaited<ReturnType<typeof scrape>>;
      try {
        frozen = await scrape();
      } finally {
        n1.resume();
      }
      assert.equal(frozen.instances, -1, "no services reply for APP: its services are unknown");
      assert.equal(frozen.errors.length, 1, frozen.errors.join("; "));
      assert.match(frozen.errors[0]!, /^services of account APP: no answer to \$SRV\.INFO or \$SRV\.STATS/);
      assert.ok(frozen.errors[0]!.includes(new URL(n1.url).port), frozen.errors[0]);
      assert.deepEqual(await runFixture(service002, [up.epoch, frozen.epoch]), []);

      // n1 answers again: echo is found, and nothing was ever down.
      const back = await scrape();
      assert.deepEqual([back.instances, back.errors], [1, []]);
      assert.deepEqual(await runFixture(service002, [up.epoch, frozen.epoch, back.epoch]), []);

      // The service really stops, and discovery works: service-002 fires.
      await echo.stop();
      const down = await scrape();
      assert.deepEqual([down.instances, down.errors], [0, []]);
      const rows = await runFixture(service002, [up.epoch, frozen.epoch, back.epoch, down.epoch]);
      assert.deepEqual(
        rows.map((r) => [r.entity_name, r.prev_instances]),
        [["echo (APP)", 1n]],
      );
    } finally {
      if (!echo.isStopped) await echo.stop();
    }
  });
});

test("a discovery user refused $SRV.* is an epoch error naming the account and the subjects", async () => {
  await using dir = await tempDir();
  await using server = await startNatsServer({
    workDir: dir.path,
    configText: [
      "listen: 127.0.0.1:-1",
      `ports_file_dir: ${JSON.stringify(dir.path)}`,
      "accounts {",
      "  SYS { users [{user: sys, password: sys}] }",
      "  APP { users [",
      "    {user: app, password: app}",
      '    {user: blind, password: blind, permissions: {publish: {deny: ["$SRV.>"]}}}',
      "  ] }",
      "}",
      "system_account: SYS",
    ].join("\n"),
  });
  const sys = await connect({ servers: server.clientUrl, user: "sys", pass: "sys" });
  const app = await connect({ servers: server.clientUrl, user: "app", pass: "app" });
  const blind = await connect({ servers: server.clientUrl, user: "blind", pass: "blind" });
  try {
    const echo = await new Svcm(app).add({ name: "echo", version: "1.0.0" });
    echo.addEndpoint("echo", { subject: "echo", handler: (_err, msg) => msg.respond(msg.data) });
    const { marker, replies } = await scrapeOneEpoch(sys, VARZ, {
      accounts: [{ name: "APP", connection: () => Promise.resolve(blind) }],
    });
    assert.deepEqual(
      replies.filter((r) => r.source === "services"),
      [],
      "no services reply for APP: its services are unknown",
    );
    const errors = marker.errors.filter((e) => e.source === "services").map((e) => e.error);
    assert.equal(errors.length, 1, errors.join("; "));
    assert.match(
      errors[0]!,
      /^services of account APP: the server refused its user permission to publish to \$SRV\.INFO, \$SRV\.STATS/,
    );
    await echo.stop();
  } finally {
    for (const nc of [blind, app, sys]) await nc.close();
  }
});
