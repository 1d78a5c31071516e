/**
 * conn-003 on a real nats-server 2.9.10, from what the fold stores of real scrapes: a client
 * refused for a wrong password and a client that sends a payload over max_payload are closed
 * by the server, and the check reports one finding per account, user and reason, naming the
 * reason, the clients and the user the payload violator authenticated as; a client that
 * closes its own connection is not reported, and the next epoch, which lists the same closes
 * again, gives the same findings without counting a close twice. A refused client followed by
 * 300 normal closes before the next scrape is still counted: the scraper pages back through
 * the closed list (256 a page) to before the previous scrape.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createConnection } from "node:net";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { CONN_CHECKS } from "../../../src/checks/conn/index.ts";
import { SOURCES } from "../../../src/scrape/index.ts";
import type { ScrapeReply } from "../../../src/catalog/index.ts";
import {
  APP_USER,
  SYS_USER,
  portOf,
  startTestServer,
  type TestServer,
} from "../../harness/start-nats-server.ts";
import { scrapeOneEpoch } from "../catalog/live-scrape.ts";
import { catalogWith, runCheck } from "./check-harness.ts";

const SCRAPED = SOURCES.filter((s) => ["varz", "connz", "connz_closed"].includes(s.name));
const conn003 = CONN_CHECKS.find((c) => c.code === "conn-003")!;

/** A raw client that connects as APP and publishes more than the server's max_payload (1 KiB here). */
async function oversizedPublisher(port: number): Promise<void> {
  const socket = createConnection({ host: "127.0.0.1", port });
  await new Promise<void>((resolve) => {
    // The server drops the connection: a reset is the expected end, not a failure.
    socket.on("error", () => undefined);
    socket.once("close", () => resolve());
    let sent = false;
    socket.on("data", (chunk: Buffer) => {
      if (sent || !chunk.toString().startsWith("INFO")) return;
      sent = true;
      const opts = {
        verbose: false,
        pedantic: false,
        name: "oversized",
        user: APP_USER.user,
        pass: APP_USER.password,
      };
      socket.write(`CONNECT ${JSON.stringify(opts)}\r\nPUB big 4096\r\n${"x".repeat(4096)}\r\n`);
    });
  });
}

describe("conn-003 on a real 2.9.10 server closing clients", () => {
  let server: TestServer;
  let sys: NatsConnection;
  const epochs: ScrapeReply[][] = [];

  before(async () => {
    server = await startTestServer("s1", { extraConfig: "max_payload: 1024\n" });
    sys = await connect({ servers: server.url, user: SYS_USER.user, pass: SYS_USER.password });
    epochs.push((await scrapeOneEpoch(sys, SCRAPED)).replies);

    await assert.rejects(
      connect({
        servers: server.url,
        user: APP_USER.user,
        pass: "wrong",
        name: "bad-password",
        reconnect: false,
      }),
    );
    await oversizedPublisher(portOf(server.url));
    const polite = await connect({
      servers: server.url,
      user: APP_USER.user,
      pass: APP_USER.password,
      name: "polite",
    });
    await polite.close();
    epochs.push((await scrapeOneEpoch(sys, SCRAPED)).replies);
    epochs.push((await scrapeOneEpoch(sys, SCRAPED)).replies);

    await assert.rejects(
      connect({ servers: server.url, user: APP_USER.user, pass: "wrong", name: "buried", reconnect: false }),
    );
    for (let i = 0; i < 300; i++) {
      const nc = await connect({ servers: server.url, user: APP_USER.user, pass: APP_USER.password });
      await nc.close();
    }
    epochs.push((await scrapeOneEpoch(sys, SCRAPED)).replies);
  });

  after(async () => {
    await sys?.close();
    await server?.[Symbol.asyncDispose]();
  });

  test("closes are grouped by account, user and reason, each counted once, and stay within the window", async () => {
    await using fixture = await catalogWith(
      epochs.map((replies) => ({ replies, marker: { servers_expected: ["s1"] } })),
    );
    const rows = await runCheck(fixture.catalog, conn003, fixture.epochs[1]!);
    const byReason = new Map(rows.map((r) => [String(r.reason), r]));
    assert.equal(rows.length, byReason.size, "one row per account, user and reason");
    const auth = byReason.get("Authentication Failure");
    assert.ok(auth, `no authentication failure among ${[...byReason.keys()].join(", ")}`);
    assert.deepEqual(auth.servers, ["s1"]);
    assert.deepEqual(auth.clients, ["bad-password@127.0.0.1"]);
    assert.equal(Number(auth.closes), 1);
    const payload = rows.find((r) => /Payload/.test(String(r.reason)));
    assert.ok(payload, `no close of the oversized publisher among ${[...byReason.keys()].join(", ")}`);
    assert.equal(payload.account, "APP");
    assert.equal(payload.user, "app");
    assert.equal(payload.entity_name, `app (APP): ${String(payload.reason)}`);
    assert.deepEqual(payload.clients, ["oversized@127.0.0.1"]);
    assert.ok(
      !rows.some((r) => (r.clients as string[]).some((c) => c.startsWith("polite@"))),
      "a client that closed itself is not reported",
    );
    for (const r of rows) assert.equal(r.severity, "info");

    const identity = (list: Record<string, unknown>[]) =>
      list.map((r) => [r.entity_pk, r.entity_key, Number(r.closes)]).sort();
    assert.deepEqual(
      identity(await runCheck(fixture.catalog, conn003, fixture.epochs[2]!)),
      identity(rows),
      "the next epoch lists the same closes again: the same findings, each close counted once",
    );
    const recorded = await fixture.catalog.withReader(async (con) =>
      (
        await con.runAndReadAll(
          "SELECT count(*) AS closes, count(DISTINCT connection_pk) AS connections FROM hx.connection_closes",
        )
      ).getRowObjectsJS(),
    );
    assert.equal(recorded[0]!.closes, recorded[0]!.connections, "each close recorded once");
  });

  test("a close buried under 300 later ones is read from a further page and counted", async () => {
    const pages = epochs[3]!.filter((r) => r.source === "connz_closed").length;
    assert.ok(pages >= 2, `the closed list came in ${pages} page(s)`);
    await using fixture = await catalogWith(
      epochs.map((replies) => ({ replies, marker: { servers_expected: ["s1"] } })),
    );
    const rows = await runCheck(fixture.catalog, conn003, fixture.epochs[3]!);
    const auth = rows.find((r) => r.reason === "Authentication Failure");
    assert.ok(auth, "the refused clients are reported");
    assert.equal(Number(auth.closes), 2, "the first refused client and the buried one");
    assert.deepEqual(auth.clients, ["bad-password@127.0.0.1", "buried@127.0.0.1"]);
    assert.ok(!rows.some((r) => r.reason === "Client Closed"), "none of the 300 that closed themselves");
  });
});
