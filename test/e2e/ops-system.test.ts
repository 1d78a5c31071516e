/**
 * The system-space ops endpoints of a catalog node (spec: Subject table `ops.sizing`,
 * `ops.memory`, `ops.storage`, `usage.record`; Broadcast feeds `feed.memory`), on a real node
 * monitoring its embedded server. Shapes are natsmon's (src/protocol/ops-payloads.ts).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { NatsConnection } from "@nats-io/nats-core";
import {
  systemSubjects,
  type OpsMemoryReply,
  type OpsSizingReply,
  type OpsStorageReply,
} from "../../src/protocol/index.ts";
import { callApi, sqlQuery } from "../harness/api-client.ts";
import { countRows, spawnLocalNode } from "../harness/local-node.ts";
import type { NatsmonProcess } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

const subjects = systemSubjects("local");

describe("ops.sizing, ops.memory, ops.storage, usage.record and feed.memory", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let node: NatsmonProcess;
  let nc: NatsConnection;
  const samples: OpsMemoryReply[] = [];

  before(async () => {
    dir = await tempDir();
    ({ node, nc } = await spawnLocalNode(dir.path, [
      "db: {memory-limit: 512MB, threads: 2, checkpoint-threshold: 64MiB, memory-profile: {enabled: true, interval: 200ms}}",
    ]));
    const sub = nc.subscribe(subjects.feedMemory);
    void (async () => {
      for await (const m of sub) samples.push(m.json<OpsMemoryReply>());
    })();
    await waitFor(async () => (await countRows(nc, "local", "hx.epochs")) >= 1, {
      timeoutMs: 30_000,
      message: "a folded epoch",
    });
  });

  after(async () => {
    await nc?.close();
    await node?.kill("SIGTERM");
    await dir?.[Symbol.asyncDispose]();
  });

  test("ops.sizing reports DuckDB's limit, threads and checkpoint threshold as configured, with the machine", async () => {
    const r = await callApi<OpsSizingReply>(nc, subjects.opsSizing);
    assert.equal(r.system, "local");
    assert.equal(r.db.threads, 2);
    assert.match(r.db.memory_limit, /^\d+(\.\d+)? (MiB|GiB|MB|GB)$/);
    assert.equal(r.db.checkpoint_threshold, "64.0 MiB");
    assert.deepEqual(r.db.configured, {
      memory_limit: "512MB",
      threads: 2,
      checkpoint_threshold_bytes: 64 * 1024 ** 2,
    });
    assert.ok(r.machine.cores >= 1 && r.machine.memory_bytes > r.machine.free_memory_bytes);
  });

  test("ops.memory lists DuckDB's components with totals, and the process's memory", async () => {
    const r = await callApi<OpsMemoryReply>(nc, subjects.opsMemory);
    assert.ok(r.db.components.length > 0);
    assert.ok(r.db.components.some((c) => c.tag === "BASE_TABLE"));
    assert.equal(
      r.db.total_memory_bytes,
      r.db.components.reduce((s, c) => s + c.memory_bytes, 0),
    );
    assert.ok(r.process.rss_bytes > 0 && r.process.heap_used_bytes > 0);
    assert.ok(!Number.isNaN(new Date(r.at).getTime()));
  });

  test("ops.storage reports the file, its WAL and the connection pools", async () => {
    const r = await callApi<OpsStorageReply>(nc, subjects.opsStorage);
    assert.match(r.path, /local\.duckdb$/);
    assert.ok(r.file_bytes > 0);
    assert.ok(r.wal_bytes >= 0);
    assert.ok(r.blocks.block_size > 0 && r.blocks.total >= r.blocks.used);
    assert.ok(r.pools.readers.size >= 1 && r.pools.backup.size >= 1);
    assert.equal(r.pools.readers.waiting, 0);
  });

  test("feed.memory publishes the same snapshot at the configured interval while enabled", async () => {
    await waitFor(() => samples.length >= 2, { message: "two memory samples" });
    assert.equal(samples[0]!.system, "local");
    assert.ok(samples[0]!.db.components.length > 0);
  });

  test("usage.record stores a page view and answers nothing; an invalid one is dropped", async () => {
    nc.publish(subjects.usageRecord, JSON.stringify({ path: "/systems/local", title: "Local", user: "ada" }));
    nc.publish(subjects.usageRecord, JSON.stringify({ title: "no path" }));
    nc.publish(subjects.usageRecord, "not json");
    await assert.rejects(
      nc.request(subjects.usageRecord, JSON.stringify({ path: "/x" }), { timeout: 500 }),
      /TIMEOUT|timeout/i,
    );
    const rows = await waitFor(async () => {
      const found = await sqlQuery<{ path: string; title: string | null; user_name: string | null }>(
        nc,
        "local",
        "SELECT path, title, user_name FROM main.page_views ORDER BY viewed_at",
      );
      return found.length >= 2 && found;
    });
    assert.deepEqual(rows, [
      { path: "/systems/local", title: "Local", user_name: "ada" },
      { path: "/x", title: null, user_name: null },
    ]);
  });
});
