/**
 * Account JWT limits and size on a real nats-server 2.9.10 in operator mode, scraped with
 * natsmon's own requests (ACCOUNTZ per account) and folded:
 * - hx.account_stats keeps a limited account's connection and subscription limits and its
 *   JWT's size, and NULL limits for an unlimited account (-1);
 * - accounts-001 fires when an account's clients reach its connection limit, not once
 *   most of them are gone;
 * - accounts-006 fires when a client of the account holds nearly its subscription limit,
 *   not once it unsubscribes;
 * - opt-acct-002 fires for an account JWT over 64 KiB (1,200 exports), not for small ones.
 * Every account has a user connected: the server loads an account only then.
 */
import assert from "node:assert/strict";
import { connect as tcpConnect } from "node:net";
import { after, before, describe, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { Authenticator, NatsConnection, Subscription } from "@nats-io/nats-core";
import { CHECKS, type Check } from "../../../src/checks/index.ts";
import { SOURCES } from "../../../src/scrape/index.ts";
import { startOperatorServer, type OperatorServer } from "../../harness/operator-mode.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { scrapeOneEpoch } from "../catalog/live-scrape.ts";
import { catalogWith, runCheck, type FixtureEpoch } from "./check-harness.ts";

const check = (code: string): Check => CHECKS.find((c) => c.code === code)!;
const SCRAPED = SOURCES.filter((s) => ["varz", "connz", "accountz", "accstatz", "jsz"].includes(s.name));
/**
 * Enough exports to take an account JWT past 64 KiB (a description would do it with less,
 * but the server refuses one longer than 8 KiB: "Description is too long").
 */
const MANY_EXPORTS = Array.from({ length: 1200 }, (_, i) => ({
  name: `export ${i}`,
  subject: `big.${i}.>`,
  type: "stream" as const,
}));

describe("account JWT limits and size on a real 2.9.10 server in operator mode", () => {
  let server: OperatorServer;
  let sys: NatsConnection;
  const users: NatsConnection[] = [];
  let byKey: Record<string, string>;
  const name = (key: unknown) => byKey[String(key)] ?? String(key);

  async function scrape(): Promise<FixtureEpoch> {
    const { replies } = await scrapeOneEpoch(sys, SCRAPED);
    return { replies, marker: { servers_expected: [server.name] } };
  }
  /** The check's rows over `epoch`, the entity (an account key) turned into its name. */
  async function fired(
    epoch: FixtureEpoch,
    code: string,
    params: Record<string, number> = {},
  ): Promise<Record<string, unknown>[]> {
    await using fixture = await catalogWith([epoch]);
    const rows = await runCheck(fixture.catalog, check(code), fixture.epochs.at(-1)!, params);
    return rows.map((r) => ({ ...r, entity_name: name(r.entity_name) }));
  }
  async function user(account: string, connectionName = "u"): Promise<NatsConnection> {
    const nc = await connect({
      servers: server.url,
      name: connectionName,
      authenticator: server.user(account, connectionName).authenticator,
    });
    users.push(nc);
    return nc;
  }
  /** What the server answers a raw client connecting as a user: its first -ERR line, or PONG. */
  async function refusal(authenticator: Authenticator): Promise<string> {
    const url = new URL(server.url);
    const socket = tcpConnect({ host: url.hostname, port: Number(url.port) });
    try {
      let seen = "";
      let sent = false;
      socket.on("data", (chunk: Buffer) => {
        seen += chunk.toString();
        const info = /^INFO (.*)\r\n/.exec(seen);
        if (info && !sent) {
          sent = true;
          const { nonce } = JSON.parse(info[1]!) as { nonce: string };
          const auth = authenticator(nonce);
          socket.write(`CONNECT ${JSON.stringify({ ...auth, verbose: false, protocol: 1 })}\r\nPING\r\n`);
        }
      });
      socket.on("error", () => undefined);
      return await waitFor(() => /^(-ERR .*|PONG)\r$/m.exec(seen)?.[1], {
        message: "the server's answer to CONNECT",
      });
    } finally {
      socket.destroy();
    }
  }
  /** The account's connections as the server's STATZ counts them (what accounts-001 reads). */
  async function accountConnections(account: string): Promise<number | undefined> {
    const key = server.accounts[account];
    const reply = await sys.request("$SYS.REQ.ACCOUNT.PING.STATZ", JSON.stringify({ accounts: [key] }));
    const { data } = reply.json<{ data: { account_statz: { acc: string; conns: number }[] } }>();
    return data.account_statz.find((a) => a.acc === key)?.conns;
  }
  async function close(nc: NatsConnection): Promise<void> {
    users.splice(users.indexOf(nc), 1);
    await nc.close();
  }

  before(async () => {
    server = await startOperatorServer("accjwtlim", {
      accounts: {
        CONNS: { limits: { conn: 3 } },
        SUBS: { limits: { subs: 10 } },
        BIG: { exports: MANY_EXPORTS },
      },
    });
    byKey = Object.fromEntries(Object.entries(server.accounts).map(([n, k]) => [k, n]));
    sys = await connect({ servers: server.url, authenticator: server.user("SYS", "scraper").authenticator });
    for (const account of ["APP", "CONNS", "SUBS", "BIG"]) await user(account);
  });

  after(async () => {
    for (const nc of users) await nc.close();
    await sys?.close();
    await server?.[Symbol.asyncDispose]();
  });

  test("hx.account_stats keeps the JWT's limits and size, NULL limits for an unlimited account", async () => {
    await using fixture = await catalogWith([await scrape()]);
    const rows = await fixture.catalog.withReader(async (con) =>
      (
        await con.runAndReadAll(
          `SELECT i.name, a.max_connections, a.max_subscriptions, a.max_leafnodes, a.jwt_bytes
           FROM hx.account_stats a JOIN hx.account_ident i USING (account_pk)`,
        )
      ).getRowObjectsJS(),
    );
    const stats = new Map(rows.map((r) => [name(r.name), r]));
    const limits = (n: string) => {
      const r = stats.get(n)!;
      return [r.max_connections, r.max_subscriptions, r.max_leafnodes];
    };
    assert.deepEqual(limits("CONNS"), [3n, null, null]);
    assert.deepEqual(limits("SUBS"), [null, 10n, null]);
    assert.deepEqual(limits("APP"), [null, null, null]);
    for (const n of ["APP", "CONNS", "SUBS", "BIG"]) {
      assert.equal(stats.get(n)!.jwt_bytes, Buffer.byteLength(server.accountJwts[n]!), n);
    }
    assert.ok(Number(stats.get("BIG")!.jwt_bytes) > 64 * 1024);
  });

  test("accounts-001 fires when the account's clients reach its connection limit, not below", async () => {
    // CONNS has one client already.
    const more = [await user("CONNS"), await user("CONNS")];
    // The limit is reached: a fourth client is refused.
    assert.match(
      await refusal(server.user("CONNS", "u").authenticator),
      /maximum account active connections exceeded/,
    );
    const full = await fired(await scrape(), "accounts-001");
    assert.deepEqual(
      full.map((r): unknown[] => [
        r.entity_name,
        r.connections,
        r.max_connections,
        r.used_pct,
        r.worst_server,
      ]),
      [["CONNS", 3n, 3n, 100, server.name]],
    );
    for (const nc of more) await close(nc);
    // A client's close returns before the server has counted it out: wait until it has.
    await waitFor(async () => (await accountConnections("CONNS")) === 1, {
      message: "the server's STATZ to count CONNS's closed clients out",
    });
    assert.deepEqual(await fired(await scrape(), "accounts-001"), []);
  });

  test("accounts-006 fires when a client nearly holds the account's subscription limit, not below", async () => {
    const subber = await user("SUBS", "subber");
    const subs: Subscription[] = [];
    for (let i = 0; i < 9; i++) subs.push(subber.subscribe(`work.${i}`));
    await subber.flush();
    const near = await fired(await scrape(), "accounts-006");
    assert.equal(near.length, 1);
    const [row] = near;
    assert.deepEqual(
      [row!.entity_name, row!.max_subscriptions, row!.subscriptions, row!.used_pct],
      ["SUBS", 10n, 9n, 90],
    );
    assert.match(String(row!.connection), new RegExp(`^${server.name} cid \\d+ \\(subber\\)$`));
    for (const s of subs.slice(2)) s.unsubscribe();
    await subber.flush();
    assert.deepEqual(await fired(await scrape(), "accounts-006"), []);
  });

  test("opt-acct-002 fires for the account JWT over 64 KiB only", async () => {
    const epoch = await scrape();
    const big = await fired(epoch, "opt-acct-002");
    assert.deepEqual(
      big.map((r): unknown[] => [r.entity_name, r.jwt_bytes, r.servers]),
      [["BIG", Buffer.byteLength(server.accountJwts.BIG!), [server.name]]],
    );
    assert.deepEqual(await fired(epoch, "opt-acct-002", { p_max_size_kib: 1024 }), []);
  });
});
