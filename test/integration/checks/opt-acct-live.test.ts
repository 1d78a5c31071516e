/**
 * opt-acct-001 on a real nats-server 2.9.10, from what the fold stores of real scrapes: the
 * APP account gets a 10 MB JetStream file storage quota in the server's configuration, three
 * file streams reserve 3,000,000 bytes each (90% of it, or 86% should MB mean MiB) and the
 * check fires for APP; one of them deleted, 60% is reserved and it does not.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager, StorageType, type JetStreamManager } from "@nats-io/jetstream";
import { OPT_ACCT_CHECKS } from "../../../src/checks/opt-acct/index.ts";
import { SOURCES } from "../../../src/scrape/index.ts";
import { APP_USER, SYS_USER, startTestServer, type TestServer } from "../../harness/start-nats-server.ts";
import { scrapeOneEpoch } from "../catalog/live-scrape.ts";
import { catalogWith, runCheck } from "./check-harness.ts";

const SCRAPED = SOURCES.filter((s) => ["varz", "jsz"].includes(s.name));
const optAcct001 = OPT_ACCT_CHECKS.find((c) => c.code === "opt-acct-001")!;

/** The test server's accounts again (a later `accounts` block replaces the first), APP with a quota. */
const QUOTA_ACCOUNTS = `accounts {
  "SYS": { users: [{user: "${SYS_USER.user}", password: "${SYS_USER.password}"}] }
  "APP": {
    users: [{user: "${APP_USER.user}", password: "${APP_USER.password}"}, {user: "local"}]
    jetstream: { max_file: 10MB, max_mem: 10MB }
  }
}
`;

describe("opt-acct-001 on a real 2.9.10 server with an account storage quota", () => {
  let server: TestServer;
  let sys: NatsConnection;
  let app: NatsConnection;
  let jsm: JetStreamManager;

  before(async () => {
    server = await startTestServer("s1", { extraConfig: QUOTA_ACCOUNTS });
    sys = await connect({ servers: server.url, user: SYS_USER.user, pass: SYS_USER.password });
    app = await connect({ servers: server.url, user: APP_USER.user, pass: APP_USER.password });
    jsm = await jetstreamManager(app);
  });

  after(async () => {
    await app?.close();
    await sys?.close();
    await server?.[Symbol.asyncDispose]();
  });

  /** opt-acct-001's rows over two epochs scraped now. */
  async function optAcct001Now(): Promise<Record<string, unknown>[]> {
    const epochs = [];
    for (let i = 0; i < 2; i++) epochs.push({ replies: (await scrapeOneEpoch(sys, SCRAPED)).replies });
    await using fixture = await catalogWith(
      epochs.map((e) => ({ ...e, marker: { servers_expected: ["s1"] } })),
    );
    return await runCheck(fixture.catalog, optAcct001, fixture.epochs.at(-1)!, {}, fixture.epochs[0]);
  }

  test("three file streams reserving 9,000,000 bytes of the 10 MB quota: the check fires for APP", async () => {
    for (const name of ["A", "B", "C"]) {
      await jsm.streams.add({
        name,
        subjects: [`${name}.>`],
        storage: StorageType.File,
        max_bytes: 3_000_000,
      });
    }
    // A memory stream counts against the memory quota, not this one.
    await jsm.streams.add({
      name: "M",
      subjects: ["M.>"],
      storage: StorageType.Memory,
      max_bytes: 3_000_000,
    });
    const rows = await optAcct001Now();
    assert.deepEqual(
      rows.map((r) => [r.entity_name, r.reserved_bytes, r.reserving_streams]),
      [["APP", 9_000_000n, 3]],
    );
    const quota = Number(rows[0]!.quota_bytes);
    assert.ok(quota === 10_000_000 || quota === 10 * 1024 * 1024, `quota ${quota}`);
  });

  test("one of them deleted, 6,000,000 bytes are reserved and the check does not fire", async () => {
    await jsm.streams.delete("C");
    assert.deepEqual(await optAcct001Now(), []);
  });
});
