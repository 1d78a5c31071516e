/**
 * conn-003 on a real nats-server 2.9.10 in operator mode, where a client of APP's user
 * `retrier` keeps connecting with its user JWT and the wrong seed: the server refuses each
 * attempt (Authentication Failure) and lists the close with the JWT but without an account,
 * `authorized_user` or `name_tag`. Over three epochs of retries the check gives one finding,
 * the same at each epoch (so the feed says it once), naming the user from its JWT's subject
 * and name and the account from its issuer, with the closes counted so far; it resolves once
 * the retries have stopped for the window. conn-003 used to give a finding per close,
 * resolving at the next epoch, with no user or account.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import { jwtAuthenticator, type NatsConnection } from "@nats-io/nats-core";
import { createUser } from "@nats-io/nkeys";
import { CONN_CHECKS } from "../../../src/checks/conn/index.ts";
import { findingId } from "../../../src/domain/index.ts";
import type { ScrapeReply } from "../../../src/catalog/index.ts";
import { SOURCES } from "../../../src/scrape/index.ts";
import { startOperatorServer, type OperatorServer } from "../../harness/operator-mode.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { scrapeOneEpoch } from "../catalog/live-scrape.ts";
import { catalogWith, runCheck, type FixtureEpoch } from "./check-harness.ts";

const SCRAPED = SOURCES.filter((s) => ["varz", "connz", "connz_closed"].includes(s.name));
const conn003 = CONN_CHECKS.find((c) => c.code === "conn-003")!;
const ROUNDS = 3;
const TRIES_PER_ROUND = 2;

interface Close {
  cid: number;
  name?: string;
  reason: string;
  stop: string;
  account?: string;
  authorized_user?: string;
  jwt?: string;
}

describe("conn-003 on a real 2.9.10 server in operator mode, a user retrying with a bad seed", () => {
  let server: OperatorServer;
  let sys: NatsConnection;
  let userKey: string;
  /** An epoch before the retries, then one after each round of them, each timed as scraped. */
  const epochs: { replies: ScrapeReply[]; at: string }[] = [];
  let closes: Close[] = [];

  async function scrape(): Promise<{ replies: ScrapeReply[]; at: string }> {
    const { replies, marker } = await scrapeOneEpoch(sys, SCRAPED);
    return { replies, at: new Date(marker.epoch).toISOString() };
  }

  const folded = (list: readonly { replies: ScrapeReply[]; at: string }[]): FixtureEpoch[] =>
    list.map((e) => ({ replies: e.replies, at: e.at, marker: { servers_expected: [server.name] } }));

  async function refused(): Promise<Close[]> {
    const reply = await sys.request("$SYS.REQ.SERVER.PING.CONNZ", JSON.stringify({ state: 1, auth: true }));
    const data = (reply.json<{ data: { connections: Close[] | null } }>().data.connections ?? []).filter(
      (c) => c.name === "retrier-app",
    );
    return data.sort((a, b) => Date.parse(a.stop) - Date.parse(b.stop));
  }

  before(async () => {
    server = await startOperatorServer("op-retry");
    sys = await connect({ servers: server.url, authenticator: server.user("SYS", "scraper").authenticator });
    const retrier = server.user("APP", "retrier");
    userKey = retrier.publicKey;
    const jwt = /-----BEGIN NATS USER JWT-----\n(.+)\n/.exec(retrier.creds)![1]!;
    // The user's own JWT, its nonce signed with another user's seed.
    const wrongSeed = jwtAuthenticator(jwt, createUser().getSeed());
    epochs.push(await scrape());
    for (let round = 1; round <= ROUNDS; round++) {
      for (let i = 0; i < TRIES_PER_ROUND; i++) {
        await assert.rejects(
          connect({ servers: server.url, authenticator: wrongSeed, name: "retrier-app", reconnect: false }),
        );
      }
      // The server saves a close from the client's goroutine: wait until it lists them all.
      await waitFor(async () => (await refused()).length === round * TRIES_PER_ROUND, {
        timeoutMs: 30_000,
        message: `the server listing round ${round} of the refused connects`,
      });
      epochs.push(await scrape());
    }
    closes = await refused();
  });

  after(async () => {
    await sys?.close();
    await server?.[Symbol.asyncDispose]();
  });

  test("one finding, the same at every epoch of the retries, naming the user and account from the JWT", async () => {
    // What 2.9.10 lists: the JWT, and no account, user or name tag.
    for (const c of closes) {
      assert.equal(c.reason, "Authentication Failure");
      assert.ok(c.jwt, `close ${c.cid} lists the user JWT`);
      assert.ok(!c.account && !c.authorized_user, `close ${c.cid} names no account or user`);
    }
    // A window just long enough for every close at the last retry epoch (whole seconds).
    const windowSeconds = Math.ceil((Date.parse(epochs.at(-1)!.at) - Date.parse(closes[0]!.stop)) / 1000) + 1;
    const params = { p_window_minutes: windowSeconds / 60 };
    await using fixture = await catalogWith(folded(epochs));
    assert.deepEqual(await runCheck(fixture.catalog, conn003, fixture.epochs[0]!, params), []);
    const ids = new Set<string>();
    for (let round = 1; round <= ROUNDS; round++) {
      const rows = await runCheck(fixture.catalog, conn003, fixture.epochs[round]!, params);
      assert.equal(rows.length, 1, `one finding at retry epoch ${round}, not one per close`);
      const row = rows[0]!;
      ids.add(
        findingId({
          code: conn003.code,
          entityType: conn003.entityType,
          entityPk: Number(row.entity_pk),
          entityKey: String(row.entity_key),
        }),
      );
      assert.equal(row.user, userKey, "the user, from the JWT's subject");
      assert.equal(row.user_name, "retrier", "its name, from the JWT's name");
      assert.equal(row.account, server.appAccount, "the account the JWT was issued by");
      assert.equal(row.reason, "Authentication Failure");
      assert.equal(row.entity_name, `retrier (${server.appAccount}): Authentication Failure`);
      assert.equal(Number(row.closes), round * TRIES_PER_ROUND);
      assert.deepEqual(row.servers, [server.name]);
      assert.deepEqual(row.clients, ["retrier-app@127.0.0.1"]);
      assert.equal(row.severity, "info");
      if (round === ROUNDS) {
        assert.equal((row.first_close as Date).getTime(), Date.parse(closes[0]!.stop));
        assert.equal((row.last_close as Date).getTime(), Date.parse(closes.at(-1)!.stop));
      }
    }
    assert.equal(ids.size, 1, "the same finding identity at every epoch: it fires once and stays");
  });

  test("resolves once the retries have stopped for the window", async () => {
    const windowSeconds = Math.ceil((Date.parse(epochs.at(-1)!.at) - Date.parse(closes[0]!.stop)) / 1000) + 1;
    const params = { p_window_minutes: windowSeconds / 60 };
    const resolved = await waitFor(
      async () => {
        const later = await scrape();
        await using fixture = await catalogWith(folded([...epochs, later]));
        const epoch = fixture.epochs.at(-1)!;
        if ((await runCheck(fixture.catalog, conn003, epoch, params)).length > 0) return false;
        // The closes are still there: over a longer window the same epoch still counts them all.
        return await runCheck(fixture.catalog, conn003, epoch, { p_window_minutes: 60 });
      },
      { timeoutMs: 60_000, intervalMs: 500, message: "conn-003 to resolve once the retries left the window" },
    );
    assert.deepEqual(
      resolved.map((r) => [r.user, Number(r.closes)]),
      [[userKey, ROUNDS * TRIES_PER_ROUND]],
    );
  });
});
