/**
 * Account JWT expiry and deletion on a real nats-server 2.9.10 in operator mode, scraped
 * with natsmon's own requests and folded:
 * - an account whose JWT expires a few seconds ahead: accounts-007 fires before (short
 *   p_days), accounts-008 once the server flags it expired, and not the other way round;
 * - an account deleted from a full resolver ($SYS.REQ.CLAIMS.DELETE), which 2.9.10 keeps
 *   loaded and flags expired: its accounts-003 finding on a refused import resolves,
 *   change-003 reports it removed, and accounts-008 does not call it expired.
 * The server loads an account only when one of its users connects, so each has one.
 */
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { createAccount } from "@nats-io/nkeys";
import type { ScrapeReply } from "../../../src/catalog/index.ts";
import { CHECKS, type Check } from "../../../src/checks/index.ts";
import { SOURCES } from "../../../src/scrape/index.ts";
import { startOperatorServer, type OperatorServer } from "../../harness/operator-mode.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { scrapeOneEpoch } from "../catalog/live-scrape.ts";
import { catalogWith, runCheck, type FixtureEpoch } from "./check-harness.ts";

const check = (code: string): Check => {
  const found = CHECKS.find((c) => c.code === code);
  assert.ok(found, `no check ${code}`);
  return found;
};
const SCRAPED = SOURCES.filter((s) => ["varz", "connz", "accountz", "accstatz", "jsz"].includes(s.name));

type Epoch = FixtureEpoch & { replies: ScrapeReply[]; at: string };

/** One epoch scraped now, folded at the time the scraper gave it. */
async function scrape(sys: NatsConnection, server: OperatorServer): Promise<Epoch> {
  const { replies, marker } = await scrapeOneEpoch(sys, SCRAPED);
  return { replies, at: new Date(marker.epoch).toISOString(), marker: { servers_expected: [server.name] } };
}

/** The `expired` flag of the server's ACCOUNTZ detail of `account` in an epoch's replies. */
function expiredFlag(epoch: Epoch, account: string): unknown {
  for (const r of epoch.replies) {
    if (r.source !== "accountz") continue;
    const detail = (r.body as { data?: { account_detail?: Record<string, unknown> } }).data?.account_detail;
    if (detail?.account_name === account) return detail.expired;
  }
  return undefined;
}

/** Each check's rows over the last of `epochs`: [entity_name, …picked detail columns]. */
async function rowsOf(
  epochs: Epoch[],
  code: string,
  pick: readonly string[],
  params: Record<string, number> = {},
): Promise<unknown[][]> {
  await using fixture = await catalogWith(epochs);
  const rows = await runCheck(fixture.catalog, check(code), fixture.epochs.at(-1)!, params);
  return rows.map((r) => [r.entity_name, ...pick.map((c) => r[c])]);
}

const connections: NatsConnection[] = [];
const servers: OperatorServer[] = [];
after(async () => {
  for (const nc of connections) await nc.close().catch(() => undefined);
  for (const s of servers) await s[Symbol.asyncDispose]();
});

async function userOf(server: OperatorServer, account: string): Promise<NatsConnection> {
  const nc = await connect({
    servers: server.url,
    authenticator: server.user(account, "u").authenticator,
    maxReconnectAttempts: 0,
  });
  connections.push(nc);
  return nc;
}

describe("account JWT expiry on a real 2.9.10 server", () => {
  test("an account JWT expiring seconds ahead fires accounts-007 before and accounts-008 after", async () => {
    // Whole seconds, as the claim holds it; far enough ahead for the first scrape.
    const expiresMs = (Math.floor(Date.now() / 1000) + 15) * 1000;
    const server = await startOperatorServer("accexp", {
      accounts: { SOON: { expires: new Date(expiresMs) } },
    });
    servers.push(server);
    const soon = server.accountKey("SOON");
    const sys = await userOf(server, "SYS");
    await userOf(server, "SOON");

    const before = await scrape(sys, server);
    assert.equal(expiredFlag(before, soon), false, "the server flagged SOON expired before the first scrape");
    const expires = new Date(expiresMs);
    assert.deepEqual(
      await rowsOf([before], "accounts-007", ["account", "jwt_expires", "servers"], { p_days: 1 }),
      [["SOON", soon, expires, [server.name]]],
    );
    assert.deepEqual(await rowsOf([before], "accounts-008", ["account"]), []);

    // The server flags the account expired when its JWT's exp passes.
    const afterExpiry = await waitFor(
      async () => {
        const epoch = await scrape(sys, server);
        return expiredFlag(epoch, soon) === true && epoch;
      },
      { timeoutMs: 60_000, intervalMs: 1_000, message: "the server to flag SOON expired" },
    );
    const epochs = [before, afterExpiry];
    assert.deepEqual(await rowsOf(epochs, "accounts-008", ["account", "jwt_expires", "servers"]), [
      ["SOON", soon, expires, [server.name]],
    ]);
    assert.deepEqual(await rowsOf(epochs, "accounts-007", ["account"], { p_days: 1 }), []);
  });

  test("an account deleted from the resolver resolves its accounts-003 finding and is reported removed", async () => {
    const exporter = createAccount();
    const server = await startOperatorServer("accdel", {
      resolver: "full",
      accounts: {
        EXP: { key: exporter, exports: [{ subject: "private.>", type: "stream", token_req: true }] },
        // Imports the private export without an activation token: the server refuses it.
        GONE: { imports: [{ subject: "private.>", account: exporter.getPublicKey(), type: "stream" }] },
      },
    });
    servers.push(server);
    const gone = server.accountKey("GONE");
    const sys = await userOf(server, "SYS");
    await userOf(server, "EXP");
    await userOf(server, "GONE");

    const before = await scrape(sys, server);
    assert.deepEqual(await rowsOf([before], "accounts-003", ["subject", "cause"]), [
      ["GONE", "private.>", "no activation token"],
    ]);

    const reply = await sys.request("$SYS.REQ.CLAIMS.DELETE", server.deleteClaim("GONE"), { timeout: 5_000 });
    assert.doesNotMatch(reply.string(), /error/i, reply.string());
    const deleted = await waitFor(
      async () => {
        const epoch = await scrape(sys, server);
        return expiredFlag(epoch, gone) === true && epoch;
      },
      { timeoutMs: 30_000, intervalMs: 500, message: "the server to flag GONE expired after its deletion" },
    );
    const epochs = [before, deleted];
    assert.deepEqual(await rowsOf(epochs, "accounts-003", ["subject"]), []);
    // change-003 names the account by its JWT's name, as the other account checks do.
    assert.deepEqual(await rowsOf(epochs, "change-003", ["change"]), [["GONE", "removed"]]);
    assert.deepEqual(await rowsOf(epochs, "accounts-008", ["account"]), []);
    await using fixture = await catalogWith(epochs);
    const state = await fixture.catalog.withReader(async (con) =>
      (
        await con.runAndReadAll(
          `SELECT state, jwt_expires, servers FROM hx.account_states WHERE account = '${gone}' ORDER BY epoch`,
        )
      ).getRowObjectsJS(),
    );
    assert.deepEqual(state, [
      { state: "live", jwt_expires: null, servers: [server.name] },
      { state: "deleted", jwt_expires: null, servers: [server.name] },
    ]);
  });
});
