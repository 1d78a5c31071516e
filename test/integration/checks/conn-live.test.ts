/**
 * conn-002 on a real nats-server 2.9.10, from what the fold stores of real scrapes: a client
 * that subscribes and then stops reading its socket makes the server buffer what it cannot
 * write; with more than 1 MiB pending the check fires for that connection, and once the
 * client is gone it no longer does. The server's write_deadline is raised so that it does
 * not drop the stuck client as a slow consumer while the test scrapes.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { createConnection, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import type { NatsServerProcess } from "../../../src/bus/index.ts";
import { CONN_CHECKS } from "../../../src/checks/conn/index.ts";
import { SOURCES } from "../../../src/scrape/index.ts";
import { APP_USER, SYS_USER, launch, portOf } from "../../harness/start-nats-server.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { scrapeOneEpoch } from "../catalog/live-scrape.ts";
import { catalogWith, runCheck } from "./check-harness.ts";

const SCRAPED = SOURCES.filter((s) => ["varz", "connz"].includes(s.name));
const conn002 = CONN_CHECKS.find((c) => c.code === "conn-002")!;

/** A raw client in APP named `stuck` that subscribes to `big` and, once subscribed, stops reading. */
async function stuckSubscriber(port: number): Promise<Socket> {
  const socket = createConnection({ host: "127.0.0.1", port });
  let seen = "";
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.startsWith("INFO") && !seen.includes("CONNECT_SENT")) {
        seen += "CONNECT_SENT";
        const connectOpts = {
          verbose: false,
          pedantic: false,
          name: "stuck",
          user: APP_USER.user,
          pass: APP_USER.password,
        };
        socket.write(`CONNECT ${JSON.stringify(connectOpts)}\r\nSUB big 1\r\nPING\r\n`);
      }
      if (seen.includes("PONG")) resolve();
      if (seen.includes("-ERR")) reject(new Error(seen));
    });
  });
  socket.removeAllListeners("data");
  socket.pause();
  return socket;
}

describe("conn-002 on a real 2.9.10 server with a client that stopped reading", () => {
  let root: string;
  let server: NatsServerProcess;
  let sys: NatsConnection;
  let app: NatsConnection;
  let stuck: Socket;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), "natsmon-conn-live-"));
    server = await launch({
      name: "s1",
      workDir: root,
      port: -1,
      jetstream: false,
      extraConfig: 'write_deadline: "300s"\n',
    });
    sys = await connect({ servers: server.clientUrl, user: SYS_USER.user, pass: SYS_USER.password });
    app = await connect({ servers: server.clientUrl, user: APP_USER.user, pass: APP_USER.password });
  });

  after(async () => {
    stuck?.destroy();
    await app?.close();
    await sys?.close();
    await server?.stop();
    await rm(root, { recursive: true, force: true });
  });

  async function conn002Now(): Promise<Record<string, unknown>[]> {
    const { replies } = await scrapeOneEpoch(sys, SCRAPED);
    await using fixture = await catalogWith([{ replies, marker: { servers_expected: ["s1"] } }]);
    return await runCheck(fixture.catalog, conn002, fixture.epochs[0]!);
  }

  test("a subscribed client with nothing published to it has nothing pending", async () => {
    stuck = await stuckSubscriber(portOf(server.clientUrl));
    assert.deepEqual(await conn002Now(), []);
  });

  test("with 32 MiB published to a subscriber that stopped reading, the check fires for it", async () => {
    const payload = new Uint8Array(512 * 1024);
    for (let i = 0; i < 64; i++) app.publish("big", payload);
    await app.flush();
    const rows = await waitFor(
      async () => {
        const found = await conn002Now();
        return found.length > 0 && found;
      },
      { timeoutMs: 30_000, message: "conn-002 for the stuck client" },
    );
    assert.deepEqual(
      rows.map((r) => [r.server, r.client_name, r.account]),
      [["s1", "stuck", "APP"]],
    );
    assert.match(String(rows[0]!.entity_name), /^s1 cid \d+ \(stuck\)$/);
    assert.ok(Number(rows[0]!.pending_bytes) > 1_048_576, `pending ${String(rows[0]!.pending_bytes)}`);
  });

  test("once the client is gone, the check no longer fires", async () => {
    stuck.destroy();
    await waitFor(async () => (await conn002Now()).length === 0, {
      timeoutMs: 30_000,
      message: "conn-002 to clear",
    });
  });
});
