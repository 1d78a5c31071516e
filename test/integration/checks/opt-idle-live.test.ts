/**
 * The opt-idle optimization checks against one real nats-server 2.9.10 (accounts SYS, APP and
 * IDLE), each condition made for real, scraped with natsmon's own requests, folded, and the
 * check run over the window of the epochs, as checks.findings runs it:
 * - opt-idle-001: the server carries a test's few connections, then eleven more;
 * - opt-idle-002 / 003 / 004: a stream with a consumer that read everything and one that
 *   read nothing, idle, then a message published and both consumers reading again;
 * - opt-idle-005 / 006: the IDLE account without any connection, then its user connected and
 *   publishing, then gone again;
 * - opt-idle-007: a connection that never moves a message, then publishes one.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import { AckPolicy, jetstream } from "@nats-io/jetstream";
import { OPT_IDLE_CHECKS } from "../../../src/checks/opt-idle/index.ts";
import { APP_USER, testAccountUser } from "../../harness/start-nats-server.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { runFixture, type FixtureEpoch } from "./check-harness.ts";
import { startLiveServer, type LiveServer } from "./live-fixture.ts";

const IDLE_USER = testAccountUser({ name: "IDLE" });

/** The check's rows over `epochs`, folded in order (10 s apart), from the first to the last. */
async function rows(
  code: string,
  epochs: readonly FixtureEpoch[],
  params: Record<string, number> = {},
): Promise<Record<string, unknown>[]> {
  const check = OPT_IDLE_CHECKS.find((c) => c.code === code)!;
  return runFixture(check, epochs, params);
}

/** The entity names of the check's rows over `epochs`, sorted. */
async function names(code: string, epochs: readonly FixtureEpoch[], params: Record<string, number> = {}) {
  return (await rows(code, epochs, params)).map((r) => String(r.entity_name)).sort();
}

describe("opt-idle checks on a real 2.9.10 server", () => {
  let live: LiveServer;

  const scrape = () => live.scrape();

  before(async () => {
    live = await startLiveServer("idle1", {
      sources: ["varz", "jsz", "connz", "accstatz"],
      extraAccounts: [{ name: "IDLE" }],
    });
  });

  after(async () => {
    await live?.close();
  });

  test("opt-idle-001 reports the server while it holds two connections, not once it held thirteen", async () => {
    // The CPU limit is raised: the test machine is shared, and a spike of the server's own
    // start-up or of a neighbour's load is not what this test is about.
    const params = { p_max_cpu_percent: 50 };
    const quiet = [];
    for (let i = 0; i < 5; i++) quiet.push(await scrape());
    const found = await rows("opt-idle-001", quiet, params);
    assert.deepEqual(
      found.map((r) => [r.entity_name, r.samples, r.max_connections]),
      [["idle1", 5n, 2n]],
    );
    assert.deepEqual(await rows("opt-idle-001", quiet.slice(1), params), [], "four samples are too few");

    const extra = await Promise.all(
      Array.from({ length: 11 }, () =>
        connect({ servers: live.server.url, user: APP_USER.user, pass: APP_USER.password }),
      ),
    );
    try {
      assert.deepEqual(await rows("opt-idle-001", [...quiet, await scrape()], params), []);
    } finally {
      await Promise.all(extra.map((nc) => nc.close()));
    }
  });

  test("opt-idle-002, 003 and 004 report an idle stream and its consumers, and not once it takes a message", async () => {
    const jsm = await live.jsm();
    const js = jetstream(live.app);
    await jsm.streams.add({ name: "QUIET", subjects: ["quiet.>"] });
    await jsm.consumers.add("QUIET", { durable_name: "reader", ack_policy: AckPolicy.Explicit });
    await jsm.consumers.add("QUIET", { durable_name: "never", ack_policy: AckPolicy.Explicit });
    for (let i = 0; i < 3; i++) await js.publish(`quiet.${i}`, `m${i}`);
    async function read(consumer: string, count: number) {
      const messages = await (await js.consumers.get("QUIET", consumer)).fetch({ max_messages: count });
      let seen = 0;
      for await (const m of messages) {
        await m.ackAck();
        if (++seen === count) break;
      }
    }
    await read("reader", 3);

    const idle = [await scrape(), await scrape()];
    assert.deepEqual(await names("opt-idle-002", idle), ["APP/QUIET"]);
    const inactive = await rows("opt-idle-003", idle);
    assert.deepEqual(inactive.map((r) => [r.entity_name, r.delivered_stream_seq, r.num_pending]).sort(), [
      ["APP/QUIET/never", 0n, 3n],
      ["APP/QUIET/reader", 3n, 0n],
    ]);
    assert.deepEqual(await names("opt-idle-004", idle), ["APP/QUIET/reader"], "never still has 3 pending");

    await js.publish("quiet.3", "m3");
    const published = [idle[1]!, await scrape()];
    assert.deepEqual(await names("opt-idle-002", published), [], "the stream took a message");
    assert.deepEqual(await names("opt-idle-004", published), [], "reader has one pending, the stream moved");

    await read("reader", 1);
    await read("never", 4);
    assert.deepEqual(await names("opt-idle-003", [published[1]!, await scrape()]), [], "both delivered");
  });

  test("opt-idle-005 reports IDLE while nothing uses it, and not once its user connects and publishes", async () => {
    const params = { p_threshold_secs: 10 };
    const unused = [await scrape(), await scrape()];
    const found = await rows("opt-idle-005", unused, params);
    assert.deepEqual(
      found.map((r) => [r.entity_name, r.never_used]),
      [["IDLE", true]],
      "APP has connections; SYS and $G are left out",
    );

    const user = await connect({ servers: live.server.url, ...idleCredentials() });
    try {
      user.publish("hello", "idle no more");
      await user.flush();
      assert.deepEqual(await names("opt-idle-005", [unused[1]!, await scrape()], params), []);
    } finally {
      await user.close();
    }
  });

  test("opt-idle-006 reports IDLE's user once its connection is gone, and not while it is connected", async () => {
    const user = await connect({ servers: live.server.url, ...idleCredentials() });
    const connected = await scrape();
    assert.deepEqual(
      await names("opt-idle-006", [connected, await scrape()]),
      [],
      "every user seen is still connected",
    );
    await user.close();
    const gone = await waitFor(
      async () => {
        const epoch = await scrape();
        return (await names("opt-idle-006", [connected, epoch])).length > 0 && epoch;
      },
      { message: "the closed connection to leave CONNZ" },
    );
    const found = await rows("opt-idle-006", [connected, gone]);
    assert.deepEqual(
      found.map((r) => [r.entity_name, r.account, r.user, r.servers]),
      [[`${IDLE_USER.user} (IDLE)`, "IDLE", IDLE_USER.user, ["idle1"]]],
    );

    const again = await connect({ servers: live.server.url, ...idleCredentials() });
    try {
      assert.deepEqual(await names("opt-idle-006", [connected, gone, await scrape()]), []);
    } finally {
      await again.close();
    }
  });

  test("opt-idle-007 reports a connection that never moved a message once idle, and not after it publishes", async () => {
    // 0.05 minutes: 3 s of idleness stand for the default 5 minutes.
    const params = { p_idle_minutes: 0.05 };
    const silent = await connect({
      servers: live.server.url,
      user: APP_USER.user,
      pass: APP_USER.password,
      name: "silent",
    });
    try {
      const isSilent = (r: Record<string, unknown>) => String(r.entity_name).endsWith("(silent)");
      const found = await waitFor(
        async () => {
          const hit = (await rows("opt-idle-007", [await scrape()], params)).filter(isSilent);
          return hit.length > 0 && hit;
        },
        { timeoutMs: 30_000, message: "the silent connection to be idle for 3 s" },
      );
      assert.equal(found.length, 1);
      assert.equal(found[0]!.account, "APP");
      assert.ok(Number(found[0]!.idle_ns) >= 3e9, `idle_ns ${String(found[0]!.idle_ns)}`);

      silent.publish("spoken", "one message");
      await silent.flush();
      const after = await rows("opt-idle-007", [await scrape()], params);
      assert.deepEqual(after.filter(isSilent), [], "it moved a message");
    } finally {
      await silent.close();
    }
  });
});

function idleCredentials() {
  return { user: IDLE_USER.user, pass: IDLE_USER.password };
}
