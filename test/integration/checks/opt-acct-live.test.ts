/**
 * opt-acct-001 on a real nats-server 2.9.10, from what the fold stores of real scrapes: the
 * APP account gets a 10 MB JetStream file storage quota in the server's configuration, three
 * file streams reserve 3,000,000 bytes each (90% of it, or 86% should MB mean MiB) and the
 * check fires for APP; one of them deleted, 60% is reserved and it does not.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { StorageType, type JetStreamManager } from "@nats-io/jetstream";
import { OPT_ACCT_CHECKS } from "../../../src/checks/opt-acct/index.ts";
import { APP_USER, SYS_USER } from "../../harness/start-nats-server.ts";
import { startLiveServer, type LiveServer } from "./live-fixture.ts";

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
  let live: LiveServer;
  let jsm: JetStreamManager;

  before(async () => {
    live = await startLiveServer("s1", { sources: ["varz", "jsz"], extraConfig: QUOTA_ACCOUNTS });
    jsm = await live.jsm();
  });

  after(async () => {
    await live?.close();
  });

  /** opt-acct-001's rows over two epochs scraped now. */
  const optAcct001Now = () => live.checkNow(optAcct001, { epochs: 2 });

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
