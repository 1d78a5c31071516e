/**
 * server-005 (memory) and server-017 (file storage) against a real 3-node 2.9.10 cluster whose
 * JetStream limits are 2 MiB of memory and 10 MiB of file storage, scraped with natsmon's own
 * requests and folded, the checks run over the latest epoch:
 * - the audit's case, a small empty stream with a byte limit beside an unbounded one holding
 *   200 KB (in memory and on file): the JSZ reservation is only the small stream's limit, far
 *   below what the servers hold, and far below their limits: nothing fires;
 * - a file stream whose byte limit reserves over 90% of max_file_store: server-017 fires on the
 *   servers holding it;
 * - a memory stream whose byte limit reserves over 90% of max_memory_store, and later an
 *   unbounded memory stream holding over 90% of it: server-005 fires on the servers holding it.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { jetstream, StorageType, type JetStreamManager } from "@nats-io/jetstream";
import { server005 } from "../../../src/checks/server/server-005.ts";
import { server017 } from "../../../src/checks/server/server-017.ts";
import type { Check } from "../../../src/checks/index.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { startLiveCluster, type LiveCluster } from "./live-fixture.ts";

const SERVERS = ["n1", "n2", "n3"];
const MEMORY_MAX = 2 * 1024 * 1024;
const FILE_MAX = 10 * 1024 * 1024;

describe("server-005 and server-017 on a real 3-node 2.9.10 cluster with small JetStream limits", () => {
  let live: LiveCluster;
  let jsm: JetStreamManager;

  /** The check's rows over a fresh scrape, sorted by server. */
  async function rows(check: Check): Promise<Record<string, unknown>[]> {
    const found = await live.checkNow(check);
    return found.sort((a, b) => String(a.server).localeCompare(String(b.server)));
  }

  /** Polls until the check fires on every server, and returns its rows. */
  async function firing(check: Check, message: string): Promise<Record<string, unknown>[]> {
    return waitFor(
      async () => {
        const found = await rows(check);
        return found.length === SERVERS.length && found;
      },
      { message },
    );
  }

  /** Publishes `count` messages of `size` bytes to `subject`, each acknowledged by the stream. */
  async function publish(subject: string, count: number, size: number): Promise<void> {
    const js = jetstream(live.app);
    for (let i = 0; i < count; i++) await js.publish(subject, new Uint8Array(size));
  }

  before(async () => {
    live = await startLiveCluster({
      sources: ["varz", "jsz"],
      jetstreamMax: { memoryBytes: MEMORY_MAX, fileBytes: FILE_MAX },
    });
    jsm = await live.jsm();
  });

  after(async () => {
    await live?.close();
  });

  test("a small bounded stream beside an unbounded one holding more raises nothing", async () => {
    for (const storage of [StorageType.File, StorageType.Memory]) {
      const prefix = storage === StorageType.File ? "" : "M";
      await jsm.streams.add({
        name: `${prefix}EVENTS`,
        subjects: [`${prefix}events.>`],
        storage,
        num_replicas: 3,
      });
      await publish(`${prefix}events.x`, 200, 1000);
      await jsm.streams.add({
        name: `${prefix}AUDIT`,
        subjects: [`${prefix}audit.>`],
        storage,
        num_replicas: 3,
        max_bytes: 100_000,
      });
    }
    // Every server holds its 200 KB and reserves 100,000 bytes, in memory and on file.
    await waitFor(
      async () => {
        const { replies } = await live.scrape();
        const jsz = replies
          .filter((r) => r.source === "jsz")
          .map((r) => (r.body as { data: Record<string, number> }).data);
        return (
          jsz.length === 3 &&
          jsz.every((j) => Number(j.reserved_storage) === 100_000 && Number(j.reserved_memory) === 100_000) &&
          jsz.every((j) => Number(j.storage) > 200_000 && Number(j.memory) > 200_000)
        );
      },
      { message: "the streams and their reservations in every server's JSZ" },
    );
    assert.deepEqual(await rows(server017), []);
    assert.deepEqual(await rows(server005), []);
  });

  test("server-017 fires where file streams' byte limits reserve over 90% of max_file_store", async () => {
    await jsm.streams.add({ name: "BIG", subjects: ["big.>"], num_replicas: 3, max_bytes: 9_500_000 });
    const found = await firing(server017, "server-017 on every server");
    assert.deepEqual(
      found.map((r) => [r.server, r.reserved_storage_bytes, r.max_storage_bytes, r.reserved_percent]),
      SERVERS.map((s) => [s, 9_600_000n, BigInt(FILE_MAX), 91.55]),
    );
    assert.deepEqual(await rows(server005), []);
    await jsm.streams.delete("BIG");
    await waitFor(async () => (await rows(server017)).length === 0, { message: "server-017 to stop" });
  });

  test("server-005 fires where memory streams' byte limits reserve, or their messages take, over 90% of max_memory_store", async () => {
    await jsm.streams.add({
      name: "MBIG",
      subjects: ["mbig.>"],
      storage: StorageType.Memory,
      num_replicas: 3,
      max_bytes: 1_800_000,
    });
    const reserved = await firing(server005, "server-005 on every server for the reservation");
    assert.deepEqual(
      reserved.map((r) => [r.server, r.reserved_memory_bytes, r.max_memory_bytes, r.reserved_percent]),
      SERVERS.map((s) => [s, 1_900_000n, BigInt(MEMORY_MAX), 90.6]),
    );
    assert.ok(reserved.every((r) => Number(r.used_percent) < 20));
    await jsm.streams.delete("MBIG");
    await waitFor(async () => (await rows(server005)).length === 0, { message: "server-005 to stop" });

    // About 1.75 MB more in the unbounded memory stream: some 93% of the limit in use.
    await publish("Mevents.x", 175, 10_000);
    const used = await firing(server005, "server-005 on every server for the memory in use");
    assert.ok(
      used.every((r) => Number(r.used_percent) >= 90 && Number(r.reserved_percent) < 5),
      JSON.stringify(used, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v)),
    );
    assert.deepEqual(await rows(server017), []);
  });
});
