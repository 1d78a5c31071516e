/**
 * The opt-cost optimization checks against a real 3-node nats-server 2.9.10 cluster, each
 * condition made for real, scraped with natsmon's own requests, folded, and the check run
 * over the window of the epochs, as checks.findings runs it:
 * - opt-cost-001: an R3 stream and an R1 stream that take nothing, then the R3 one a message;
 * - opt-cost-002: a memory stream above a (lowered) size, then purged;
 * - opt-cost-003 / 005: a memory and a file stream whose byte limit reserves far more than
 *   they hold, then filled past a fifth of it;
 * - opt-cost-004: 2.9.10 sends no stream `compression` (2.10.0+), so a large file stream is
 *   not judged there (its fixture covers 2.10 replies): the check stays silent.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { jetstream, StorageType, type JetStreamManager } from "@nats-io/jetstream";
import { OPT_COST_CHECKS } from "../../../src/checks/opt-cost/index.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { q } from "../catalog/lab-epoch.ts";
import { catalogWith, runCheck, runFixture, type FixtureEpoch } from "./check-harness.ts";
import { startLiveCluster, type LiveCluster } from "./live-fixture.ts";

/** The check's rows over `epochs`, folded in order (10 s apart), from the first to the last. */
async function rows(
  code: string,
  epochs: readonly FixtureEpoch[],
  params: Record<string, number> = {},
): Promise<Record<string, unknown>[]> {
  const check = OPT_COST_CHECKS.find((c) => c.code === code)!;
  return runFixture(check, epochs, params);
}

/** The entity names of the check's rows over `epochs`, sorted. */
async function names(code: string, epochs: readonly FixtureEpoch[], params: Record<string, number> = {}) {
  return (await rows(code, epochs, params)).map((r) => String(r.entity_name)).sort();
}

describe("opt-cost checks on a real 3-node 2.9.10 cluster", () => {
  let live: LiveCluster;
  let jsm: JetStreamManager;

  const scrape = () => live.scrape();

  /** Publishes `count` messages of `size` bytes to `subject`, each acknowledged by the stream. */
  async function publish(subject: string, count: number, size = 16): Promise<void> {
    const js = jetstream(live.app);
    for (let i = 0; i < count; i++) await js.publish(subject, new Uint8Array(size));
  }

  /** The server leading stream `name`. */
  async function leaderOf(name: string): Promise<string> {
    return waitFor(async () => (await jsm.streams.info(name)).cluster?.leader, {
      message: `a leader for ${name}`,
    });
  }

  before(async () => {
    live = await startLiveCluster({ sources: ["varz", "jsz"] });
    jsm = await live.jsm();
  });

  after(async () => {
    await live?.close();
  });

  test("opt-cost-001 reports an idle R3 stream, not an idle R1 one, and not once the R3 one takes a message", async () => {
    await jsm.streams.add({ name: "ARCHIVE", subjects: ["archive.>"], num_replicas: 3 });
    await jsm.streams.add({ name: "SMALL", subjects: ["small.>"], num_replicas: 1 });
    await publish("archive.a", 3);
    await publish("small.a", 3);
    // Every replica current first: a new leader elected in the range would tell nothing new.
    await waitFor(
      async () => {
        const c = (await jsm.streams.info("ARCHIVE")).cluster;
        return c?.replicas?.length === 2 && c.replicas.every((r) => r.current && !r.offline);
      },
      { message: "ARCHIVE with every replica current" },
    );

    const idle = [await scrape(), await scrape()];
    const found = await rows("opt-cost-001", idle);
    assert.deepEqual(
      found.map((r) => [r.entity_name, r.replicas, r.last_seq]),
      [["APP/ARCHIVE", 3, 3n]],
    );

    await publish("archive.b", 1);
    assert.deepEqual(await names("opt-cost-001", [idle[1]!, await scrape()]), []);
  });

  test("opt-cost-002 reports a memory stream above the size, and not once it is purged", async () => {
    await jsm.streams.add({ name: "CACHE", subjects: ["cache.>"], storage: StorageType.Memory });
    await publish("cache.a", 4, 1024);
    // 0.002 MiB (2 KiB) stands for the default 100 MiB.
    const params = { p_max_memory_mib: 0.002 };
    const found = await rows("opt-cost-002", [await scrape()], params);
    assert.deepEqual(
      found.map((r) => [r.entity_name, r.replicas, r.max_bytes]),
      [["APP/CACHE", 1, -1n]],
    );
    assert.ok(Number(found[0]!.bytes) > 4096, `bytes ${String(found[0]!.bytes)}`);

    await jsm.streams.purge("CACHE");
    assert.deepEqual(await names("opt-cost-002", [await scrape()], params), []);
    await jsm.streams.delete("CACHE");
  });

  test("opt-cost-003 reports the server of a memory stream that reserves 64 KiB and holds a little, not once it holds 20 KiB", async () => {
    await jsm.streams.add({
      name: "RESERVED",
      subjects: ["reserved.>"],
      storage: StorageType.Memory,
      max_bytes: 65_536,
    });
    await publish("reserved.a", 1);
    const leader = await leaderOf("RESERVED");
    const found = await waitFor(
      async () => {
        const r = await rows("opt-cost-003", [await scrape()]);
        return r.length > 0 && r;
      },
      { message: "the reservation to show in JSZ" },
    );
    assert.deepEqual(
      found.map((r) => [r.entity_name, r.reserved_bytes]),
      [[leader, 65_536n]],
    );
    assert.ok(Number(found[0]!.utilization_percent) < 20);

    await publish("reserved.b", 20, 1024);
    await waitFor(async () => (await rows("opt-cost-003", [await scrape()])).length === 0, {
      message: "the server to use a fifth of its reservation",
    });
  });

  test("opt-cost-005 reports the server of a file stream that reserves 1 MiB and holds a little, not once it holds 250 KiB", async () => {
    await jsm.streams.add({ name: "DISK", subjects: ["disk.>"], max_bytes: 1_048_576 });
    await publish("disk.a", 1);
    const leader = await leaderOf("DISK");
    const found = await waitFor(
      async () => {
        const r = await rows("opt-cost-005", [await scrape()]);
        return r.length > 0 && r;
      },
      { message: "the reservation to show in JSZ" },
    );
    assert.deepEqual(
      found.map((r) => [r.entity_name, r.reserved_bytes]),
      [[leader, 1_048_576n]],
    );

    await publish("disk.b", 25, 10_240);
    await waitFor(async () => (await rows("opt-cost-005", [await scrape()])).length === 0, {
      message: "the server to use a fifth of its reservation",
    });
  });

  test("opt-cost-004 does not judge a large file stream of 2.9.10, which reports no compression", async () => {
    await jsm.streams.add({ name: "BULK", subjects: ["bulk.>"] });
    await publish("bulk.a", 4, 1024);
    await using fixture = await catalogWith([await scrape()]);
    assert.deepEqual(
      await q(
        fixture.catalog,
        "SELECT storage, compression, bytes > 4096 AS big FROM hx.streams WHERE stream = 'BULK'",
      ),
      [{ storage: "file", compression: null, big: true }],
    );
    // 0.000001 GiB (1 KiB) stands for the default 1 GiB.
    const check = OPT_COST_CHECKS.find((c) => c.code === "opt-cost-004")!;
    const last = fixture.epochs.at(-1)!;
    assert.deepEqual(await runCheck(fixture.catalog, check, last, { p_max_uncompressed_gib: 0.000001 }), []);
    await jsm.streams.delete("BULK");
  });
});
