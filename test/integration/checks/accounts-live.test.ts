/**
 * The account, user and micro service checks against a real 2.9.10 server, each condition
 * made for real, scraped with natsmon's own requests and folded:
 * - accounts-002: a raw TCP subscriber in APP that stops reading becomes a slow consumer
 *   (max_pending is small), and the account's counter moves;
 * - user-002: one user opens more connections than the threshold, then closes one;
 * - service-001 / service-002: micro services in APP, one instance left on an old version,
 *   then every instance of a service stopped.
 * Each check fires from what the fold stores and goes quiet once the condition is gone.
 */
import assert from "node:assert/strict";
import { connect as tcpConnect, type Socket } from "node:net";
import { after, before, describe, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { Svcm, type Service } from "@nats-io/services";
import { CHECKS, type Check } from "../../../src/checks/index.ts";
import type { ServiceAccount } from "../../../src/scrape/index.ts";
import { APP_USER } from "../../harness/start-nats-server.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { catalogWith, runCheck, type FixtureEpoch } from "./check-harness.ts";
import { startLiveServer, type LiveServer } from "./live-fixture.ts";

const check = (code: string): Check => CHECKS.find((c) => c.code === code)!;

/** Runs `code` over the last of `epochs`, folded in order. */
async function fired(epochs: readonly FixtureEpoch[], code: string, params: Record<string, number> = {}) {
  await using fixture = await catalogWith(epochs);
  return await runCheck(fixture.catalog, check(code), fixture.epochs.at(-1)!, params);
}

describe("account, user and micro service checks on a real 2.9.10 server", () => {
  let live: LiveServer;
  const opened: NatsConnection[] = [];
  const appAccount: ServiceAccount = { name: "APP", connection: () => Promise.resolve(live.app) };

  const scrape = () => live.scrape({ accounts: [appAccount] });

  /** APP's slow_consumers counter as the server's account STATZ reports it. */
  async function appSlowConsumers(): Promise<number> {
    const reply = await live.sys.request(
      "$SYS.REQ.ACCOUNT.PING.STATZ",
      JSON.stringify({ accounts: ["APP"] }),
      { timeout: 2000 },
    );
    const statz = reply.json<{ data: { account_statz: { acc: string; slow_consumers: number }[] } }>();
    return statz.data.account_statz.find((a) => a.acc === "APP")?.slow_consumers ?? 0;
  }

  before(async () => {
    // A subscriber more than 1 MiB behind is a slow consumer and is cut off (max_payload is
    // 1 MiB, and max_pending may not be smaller).
    live = await startLiveServer("acc1", {
      sources: ["varz", "connz", "accstatz"],
      extraConfig: "\nmax_pending: 1048576\n",
    });
  });

  after(async () => {
    for (const nc of opened) await nc.close().catch(() => undefined);
    await live?.close();
  });

  test("accounts-002 fires for APP when one of its subscribers becomes a slow consumer, then goes quiet", async () => {
    const before = await scrape();
    assert.equal(await appSlowConsumers(), 0);
    // A subscriber that never reads: a raw client whose socket is paused once subscribed.
    const url = new URL(live.server.url);
    const socket: Socket = tcpConnect({ host: url.hostname, port: Number(url.port) });
    try {
      let seen = "";
      socket.on("data", (chunk: Buffer) => (seen += chunk.toString()));
      socket.on("error", () => undefined);
      socket.write(
        `CONNECT ${JSON.stringify({ user: APP_USER.user, pass: APP_USER.password, verbose: false })}\r\nSUB slow.> 1\r\nPING\r\n`,
      );
      await waitFor(() => seen.includes("PONG"), { message: "the raw subscriber is registered" });
      socket.pause();
      const payload = new Uint8Array(64 * 1024);
      await waitFor(
        async () => {
          for (let i = 0; i < 64; i++) live.app.publish("slow.data", payload);
          await live.app.flush();
          return (await appSlowConsumers()) > 0;
        },
        { timeoutMs: 60_000, message: "APP's subscriber becomes a slow consumer" },
      );
    } finally {
      socket.destroy();
    }
    const during = await scrape();
    const rows = await fired([before, during], "accounts-002");
    assert.deepEqual(
      rows.map((r) => [r.entity_name, r.server, r.servers]),
      [["APP", null, [live.server.name]]],
    );
    assert.ok(Number(rows[0]!.new_slow_consumers) >= 1);
    // The counter stays where it is: nothing new since.
    assert.deepEqual(await fired([before, during, await scrape()], "accounts-002"), []);
  });

  test("user-002 fires for a user holding more connections than the threshold, then goes quiet", async () => {
    // `app` holds the test's own connection plus the ones opened here; `sys` is another user.
    for (let i = 0; i < 3; i++) {
      opened.push(await connect({ servers: live.server.url, user: APP_USER.user, pass: APP_USER.password }));
    }
    const many = await scrape();
    const rows = await fired([many], "user-002", { p_max_connections: 3 });
    assert.deepEqual(
      rows.map((r) => [r.entity_name, r.entity_key, r.account, r.connections]),
      [["app (APP)", "app", "APP", 4n]],
    );
    await opened.pop()!.close();
    await waitFor(
      async () => {
        const epoch = await scrape();
        return (await fired([many, epoch], "user-002", { p_max_connections: 3 })).length === 0;
      },
      { message: "user-002 quiet once a connection closed" },
    );
  });

  test("service-001 and service-002 fire for a version left behind and a service stopped, then go quiet", async () => {
    const svcm = new Svcm(live.app);
    const add = async (name: string, version: string): Promise<Service> => {
      const service = await svcm.add({ name, version, description: `${name} service` });
      service.addEndpoint("go", { subject: `${name}.go`, handler: (_err, msg) => msg.respond(msg.data) });
      return service;
    };
    const orders = [await add("orders", "1.2.0"), await add("orders", "1.1.0")];
    const billing = await add("billing", "2.0.0");
    try {
      const mixed = await scrape();
      const mismatch = await fired([mixed], "service-001");
      assert.deepEqual(
        mismatch.map((r) => [r.entity_name, r.entity_key, r.versions]),
        [["orders (APP)", "orders", ["1.1.0", "1.2.0"]]],
      );
      assert.deepEqual(await fired([mixed], "service-002"), []);

      await orders[1]!.stop();
      const agreed = await scrape();
      assert.deepEqual(await fired([mixed, agreed], "service-001"), []);

      await orders[0]!.stop();
      const down = await scrape();
      const gone = await fired([mixed, agreed, down], "service-002");
      assert.deepEqual(
        gone.map((r) => [r.entity_name, r.entity_key, r.prev_instances]),
        [["orders (APP)", "orders", 1n]],
      );
      // The next epoch has nothing more to say: orders had no instances last time either.
      assert.deepEqual(await fired([mixed, agreed, down, await scrape()], "service-002"), []);
    } finally {
      for (const s of [...orders, billing]) if (!s.isStopped) await s.stop();
    }
  });
});
