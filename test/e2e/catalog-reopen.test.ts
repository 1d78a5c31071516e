/**
 * Catalog failure states on a node serving two systems (spec: Catalog database table, Limits
 * "Catalog reopen retry"): one system's database will not open; the other answers as usual;
 * once the file is repaired the broken one opens on the next retry, answers queries and
 * resumes indexing, without a restart. The retry, once a minute in production, is shortened
 * to a second here.
 */
import assert from "node:assert/strict";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { PING_SUBJECT, systemSubjects, type DiscoveryReply } from "../../src/protocol/index.ts";
import { sqlQuery } from "../harness/api-client.ts";
import { spawnNatsmon, type NatsmonProcess } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

describe("a node with two systems, one of whose catalogs will not open", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let node: NatsmonProcess;
  let nc: NatsConnection;
  let broken: string;

  const ping = async () => (await nc.request(PING_SUBJECT, "", { timeout: 2000 })).json<DiscoveryReply>();
  const epochs = async (system: string) =>
    (await sqlQuery<{ n: number }>(nc, system, "SELECT count(*) AS n FROM hx.epochs"))[0]!.n;

  before(async () => {
    dir = await tempDir();
    const data = join(dir.path, "data");
    broken = join(data, "west.duckdb");
    const config = join(dir.path, "natsmon.yaml");
    await writeFile(
      config,
      [
        `node: {id: pair, data-dir: ${JSON.stringify(data)}}`,
        "sink: {embedded: {port: -1}}",
        "systems:",
        "  - {id: east}",
        "  - {id: west}",
        "scraper: {interval: 1s}",
      ].join("\n"),
    );
    // The broken file is there before the node starts.
    await mkdir(data, { recursive: true });
    await writeFile(broken, "this is not a DuckDB file, it is garbage".repeat(200));
    node = spawnNatsmon(["run", "--config", config], { NATSMON_CATALOG_REOPEN_MS: "1000" });
    nc = await connect({ servers: await node.waitForUrl() });
  });

  after(async () => {
    await nc?.close();
    await node?.kill("SIGTERM");
    await dir?.[Symbol.asyncDispose]();
  });

  test("each system answers on its own subjects: the healthy one indexes, the broken one says why", async () => {
    await waitFor(async () => (await epochs("east").catch(() => 0)) >= 2, { message: "east indexing" });
    const reply = await nc.request(systemSubjects("west").dbQuery, JSON.stringify({ sql: "SELECT 1" }), {
      timeout: 5000,
    });
    assert.equal(reply.headers?.get("Nats-Service-Error-Code"), "503");
    const systems = (await ping()).systems;
    assert.equal(systems.find((s) => s.id === "east")?.catalog_error, undefined);
    assert.ok(systems.find((s) => s.id === "west")?.catalog_error);
  });

  test("repairing the file opens it on the next retry: queries answer and indexing resumes, no restart", async () => {
    await rm(broken, { force: true });
    await waitFor(async () => (await epochs("west").catch(() => 0)) >= 1, {
      timeoutMs: 30_000,
      message: "west answering and indexing",
    });
    const before = await epochs("west");
    await waitFor(async () => (await epochs("west")) > before, { message: "west indexing further epochs" });
    assert.equal((await ping()).systems.find((s) => s.id === "west")?.catalog_error, undefined);
    assert.ok((await epochs("east")) >= 2, "east went on throughout");
  });
});

test("a node serving no system answers $MON.ping under its hostname, with no systems", async () => {
  await using dir = await tempDir();
  const config = join(dir.path, "natsmon.yaml");
  await writeFile(
    config,
    [
      `node: {data-dir: ${JSON.stringify(join(dir.path, "data"))}}`,
      "sink: {embedded: {port: -1}}",
      "systems: []",
    ].join("\n"),
  );
  await using node = spawnNatsmon(["run", "--config", config]);
  const nc = await connect({ servers: await node.waitForUrl() });
  try {
    const reply = (await nc.request(PING_SUBJECT, "", { timeout: 2000 })).json<DiscoveryReply>();
    assert.equal(reply.node_id, hostname());
    assert.deepEqual(reply.systems, []);
  } finally {
    await nc.close();
  }
});
