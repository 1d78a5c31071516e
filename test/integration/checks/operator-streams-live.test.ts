/**
 * Streams in operator (JWT) mode on a real nats-server 2.9.10 with a full resolver, scraped
 * with natsmon's own requests and folded. JSZ's account_details name each account twice:
 * `id`, its public key, and `name`, the name in its JWT, a free label. Streams are the
 * account's, so the catalog keys them by the key:
 * - two accounts whose JWTs carry the same name, each with a stream of the same name, have
 *   two streams, each with its account's key (they were merged and one dropped);
 * - a JWT renamed with `$SYS.REQ.CLAIMS.UPDATE` (as `nsc push` sends it) leaves its
 *   account's streams their pk (they got new ones: their history split);
 * - opt-acct-001 joins the account's streams to its quota and fires (it never matched).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager, StorageType } from "@nats-io/jetstream";
import { CHECKS, type Check } from "../../../src/checks/index.ts";
import { SOURCES } from "../../../src/scrape/index.ts";
import { startOperatorServer, type OperatorServer } from "../../harness/operator-mode.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { scrapeOneEpoch } from "../catalog/live-scrape.ts";
import { catalogWith, runCheck, type FixtureEpoch } from "./check-harness.ts";

const check = (code: string): Check => CHECKS.find((c) => c.code === code)!;
const SCRAPED = SOURCES.filter((s) => ["varz", "connz", "accountz", "accstatz", "jsz"].includes(s.name));
const JS_LIMITS = { mem_storage: 10_000_000, disk_storage: 10_000_000, streams: 10, consumer: 10 };

describe("streams in operator mode on a real 2.9.10 server are keyed by their account's key", () => {
  let server: OperatorServer;
  let sys: NatsConnection;
  const users: NatsConnection[] = [];

  async function scrape(): Promise<FixtureEpoch> {
    const { replies } = await scrapeOneEpoch(sys, SCRAPED);
    return { replies, marker: { servers_expected: [server.name] } };
  }
  async function user(account: string): Promise<NatsConnection> {
    const nc = await connect({ servers: server.url, authenticator: server.user(account, "u").authenticator });
    users.push(nc);
    return nc;
  }
  /** Each stream of each epoch: epoch, stream_pk, account, account_name, stream, label. */
  async function streams(epochs: readonly FixtureEpoch[]): Promise<Record<string, unknown>[]> {
    await using fixture = await catalogWith(epochs);
    return await fixture.catalog.withReader(async (con) =>
      (
        await con.runAndReadAll(
          `SELECT epoch, stream_pk, account, account_name, stream, checks.stream_label(domain, account, stream) AS label
           FROM hx.streams ORDER BY epoch, account, stream`,
        )
      ).getRowObjectsJS(),
    );
  }

  before(async () => {
    server = await startOperatorServer("opstreams", {
      resolver: "full",
      jetstream: true,
      accounts: {
        TWIN_A: { jwtName: "TWIN", limits: JS_LIMITS },
        TWIN_B: { jwtName: "TWIN", limits: JS_LIMITS },
        QUOTA: { limits: JS_LIMITS },
      },
    });
    sys = await connect({ servers: server.url, authenticator: server.user("SYS", "scraper").authenticator });
    for (const account of ["TWIN_A", "TWIN_B"]) {
      const jsm = await jetstreamManager(await user(account));
      await jsm.streams.add({ name: "ORDERS", subjects: [`${account}.>`], max_bytes: 1_000_000 });
    }
  });

  after(async () => {
    for (const nc of users) await nc.close();
    await sys?.close();
    await server?.[Symbol.asyncDispose]();
  });

  test("two accounts whose JWTs carry the same name each keep their stream of the same name", async () => {
    const epoch = await scrape();
    const rows = await streams([epoch]);
    assert.deepEqual(
      rows
        .filter((r) => r.stream === "ORDERS")
        .map((r) => [r.account, r.account_name, r.label])
        .sort(),
      [
        [server.accountKey("TWIN_A"), "TWIN", "TWIN/ORDERS"],
        [server.accountKey("TWIN_B"), "TWIN", "TWIN/ORDERS"],
      ].sort(),
    );
    // Nothing was dropped for leading twice.
    await using fixture = await catalogWith([epoch]);
    const errors = await fixture.catalog.withReader(async (con) =>
      (
        await con.runAndReadAll(
          "SELECT e FROM (SELECT unnest(errors) AS e FROM hx.epochs) WHERE e LIKE '%ORDERS%'",
        )
      ).getRowObjectsJS(),
    );
    assert.deepEqual(errors, []);
  });

  test("a JWT renamed through $SYS.REQ.CLAIMS.UPDATE leaves the account's stream its identity", async () => {
    const before = await scrape();
    const jwt = server.accountJwt("TWIN_A", { jwtName: "RENAMED", limits: JS_LIMITS });
    const reply = await sys.request("$SYS.REQ.CLAIMS.UPDATE", jwt, { timeout: 5000 });
    assert.match(reply.string(), /jwt updated/);
    await waitFor(
      async () => {
        const jsz = await sys.request("$SYS.REQ.SERVER.PING.JSZ", JSON.stringify({ accounts: true }));
        return jsz.string().includes('"name":"RENAMED"') || undefined;
      },
      { message: "JSZ naming the account by its new JWT name" },
    );
    const after = await scrape();
    const rows = (await streams([before, after])).filter(
      (r) => r.account === server.accountKey("TWIN_A") && r.stream === "ORDERS",
    );
    assert.equal(rows.length, 2);
    assert.equal(rows[0]!.stream_pk, rows[1]!.stream_pk);
    assert.deepEqual(
      rows.map((r) => r.account_name),
      ["TWIN", "RENAMED"],
    );
  });

  test("opt-acct-001 fires for an account whose streams reserve most of its JWT's storage quota", async () => {
    const jsm = await jetstreamManager(await user("QUOTA"));
    await jsm.streams.add({
      name: "BIG",
      subjects: ["big.>"],
      storage: StorageType.File,
      max_bytes: 6_000_000,
    });
    await using fixture = await catalogWith([await scrape()]);
    const epoch = fixture.epochs.at(-1)!;
    const rows = await runCheck(fixture.catalog, check("opt-acct-001"), epoch, { p_warn_percent: 50 });
    assert.deepEqual(
      rows.map((r) => [r.entity_name, r.reserved_bytes, r.quota_bytes, r.reserving_streams]),
      [["QUOTA", 6_000_000n, 10_000_000n, 1]],
    );
    const [pk] = await fixture.catalog.withReader(async (con) =>
      (
        await con.runAndReadAll("SELECT account_pk FROM hx.account_ident WHERE name = $1", [
          server.accountKey("QUOTA"),
        ])
      ).getRowsJS(),
    );
    assert.equal(rows[0]!.entity_pk, pk![0]);
    assert.deepEqual(
      await runCheck(fixture.catalog, check("opt-acct-001"), epoch, { p_warn_percent: 70 }),
      [],
    );
  });
});
