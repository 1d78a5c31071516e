/**
 * One live node per role of a system on a bus (role claims, bus/role-claims.ts), with
 * natsmon processes on a real nats-server as the sink. A second catalog node for a system
 * used to share the scrape stream's consumer and split its epochs with the first, and a
 * second scrape node doubled them; now either is refused, naming the node that serves the
 * role, and exits 1 when it would serve nothing else. A node with other roles to serve
 * serves those and lists the refused one in $MON.ping. A role is free again once its node
 * stops, and a node killed with SIGKILL gets its role back as soon as it is started again.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { Kvm } from "@nats-io/kv";
import { jetstreamManager } from "@nats-io/jetstream";
import { discoverNodes } from "../../src/bus/index.ts";
import { Role } from "../../src/domain/index.ts";
import { ROLE_CLAIMS_BUCKET, roleClaimKey, systemAssets, type RoleClaim } from "../../src/protocol/index.ts";
import { sqlQuery } from "../harness/api-client.ts";
import { runNatsmon, spawnNatsmon, type NatsmonProcess } from "../harness/natsmon-process.ts";
import { SYS_USER, startTestServer, type TestServer } from "../harness/start-nats-server.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

describe("one node per role of a system on a bus", () => {
  let sink: TestServer;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let nc: NatsConnection;
  const running: NatsmonProcess[] = [];

  /** A node's configuration on the shared sink; `systems` is the YAML of its `systems:` list. */
  async function config(name: string, systems: string[]): Promise<string> {
    const file = join(dir.path, `${name}.yaml`);
    await writeFile(
      file,
      [
        `node: {id: ${name}, data-dir: ${JSON.stringify(join(dir.path, name))}}`,
        `sink: {url: ${JSON.stringify(sink.url)}}`,
        "scraper: {interval: 1s}",
        "systems:",
        ...systems.map((s) => `  - ${s}`),
      ].join("\n"),
    );
    return file;
  }
  const nats = () =>
    `nats: {url: ${JSON.stringify(sink.url)}, user: ${SYS_USER.user}, password: ${SYS_USER.password}}`;
  const start = (file: string) => {
    const node = spawnNatsmon(["run", "--config", file]);
    running.push(node);
    return node;
  };
  /** The process started with this configuration that still runs. */
  const runningWith = (file: string) =>
    running.find(
      (n) => n.child.spawnargs.includes(file) && n.child.exitCode === null && n.child.signalCode === null,
    )!;
  const epochCount = async () =>
    (await sqlQuery<{ n: number }>(nc, "east", "SELECT count(*) AS n FROM hx.epochs"))[0]!.n;
  const rolesOf = async (nodeId: string, system: string) =>
    (await discoverNodes(nc)).find((r) => r.node_id === nodeId)?.systems.find((s) => s.id === system);

  let first: NatsmonProcess;
  let catalogOnly: string;
  let scrapeOnly: string;

  before(async () => {
    sink = await startTestServer("claims-sink");
    dir = await tempDir();
    nc = await connect({ servers: sink.url });
    first = start(await config("a", [`{id: east, roles: [scrape, catalog], ${nats()}}`]));
    await first.waitForUrl();
    await waitFor(
      () =>
        epochCount()
          .then((n) => n >= 2)
          .catch(() => false),
      {
        timeoutMs: 60_000,
        message: "epochs folded by node a",
      },
    );
    catalogOnly = await config("b", ["{id: east, roles: [catalog]}"]);
    scrapeOnly = await config("c", [`{id: east, roles: [scrape], ${nats()}}`]);
  });

  after(async () => {
    for (const node of running) await node.kill("SIGTERM");
    await nc?.close();
    await sink?.[Symbol.asyncDispose]();
    await dir?.[Symbol.asyncDispose]();
  });

  test("a second catalog node for the system is refused, names the node that serves it, and exits 1", async () => {
    const second = start(catalogOnly);
    assert.equal(await second.exited, 1, second.stderr());
    const said = second.stderr();
    assert.match(
      said,
      new RegExp(
        `the catalog role of system east is already served on this bus by node a \\(host ${hostname()}`,
      ),
    );
    assert.match(
      said,
      /Stop node a first and then restart this node, or give this node another system id or role/,
    );
    assert.match(
      said,
      /natsmon: every role this node is configured for is already served by another live node/,
    );
    assert.equal((await rolesOf("b", "east")) ?? "not listed", "not listed");
  });

  test("a second scrape node for the system is refused likewise", async () => {
    const second = start(scrapeOnly);
    assert.equal(await second.exited, 1, second.stderr());
    assert.match(
      second.stderr(),
      new RegExp(
        `the scrape role of system east is already served on this bus by node a \\(host ${hostname()}`,
      ),
    );
  });

  test("a node with another system to serve serves it, and lists the refused role in $MON.ping and natsmon systems", async () => {
    const both = start(await config("d", ["{id: east, roles: [catalog]}", "{id: west, roles: [catalog]}"]));
    await both.waitForUrl();
    assert.deepEqual(await rolesOf("d", "west"), { id: "west", roles: ["catalog"] });
    assert.deepEqual(await rolesOf("d", "east"), {
      id: "east",
      roles: [],
      refused: [{ role: "catalog", held_by: { node_id: "a", host: hostname() } }],
    });
    const listed = await runNatsmon(["systems", "--server", sink.url]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`catalog refused: served by node a \\(host ${hostname()}\\)`));
    assert.equal(await both.kill("SIGTERM"), 0, both.stderr());
  });

  test("once the node serving the roles stops, a catalog node and a scrape node take them, and epochs flow", async () => {
    assert.equal(await first.kill("SIGTERM"), 0, first.stderr());
    const catalog = start(catalogOnly);
    const scraper = start(scrapeOnly);
    await Promise.all([catalog.waitForUrl(), scraper.waitForUrl()]);
    assert.deepEqual((await rolesOf("b", "east"))?.roles, ["catalog"]);
    assert.deepEqual((await rolesOf("c", "east"))?.roles, ["scrape"]);
    const before = await epochCount();
    await waitFor(async () => (await epochCount()) >= before + 2, {
      timeoutMs: 60_000,
      message: "epochs scraped by c and folded by b",
    });
  });

  test("a catalog node killed with SIGKILL, started again with its node id, gets its role back at once", async () => {
    const catalog = runningWith(catalogOnly);
    assert.equal(await catalog.kill("SIGKILL"), "SIGKILL");
    const restarted = start(catalogOnly);
    await restarted.waitForUrl();
    assert.match(
      restarted.stderr(),
      /took over the catalog role from this node's earlier run, which no longer runs/,
      "taken over because its earlier run is gone, not after its claim lapsed",
    );
    assert.doesNotMatch(restarted.stderr(), /waiting for its claim to lapse/);
    const before = await epochCount();
    await waitFor(async () => (await epochCount()) >= before + 2, {
      timeoutMs: 60_000,
      message: "epochs folded by the restarted catalog node",
    });
  });

  test("a node whose role another node took over stops serving and exits 1, naming that node", async () => {
    const catalog = runningWith(catalogOnly);
    const other: RoleClaim = {
      node_id: "z",
      host: "elsewhere",
      instance: "OTHERINSTANCE",
      version: "0.0.1",
      since: new Date().toISOString(),
    };
    const kv = await new Kvm(nc).open(ROLE_CLAIMS_BUCKET);
    const jsm = await jetstreamManager(nc);
    const { scrapeStream, catalogConsumer } = systemAssets("east");
    await kv.put(roleClaimKey("east", Role.Catalog), JSON.stringify(other));
    const lastBefore = (await jsm.streams.info(scrapeStream)).state.last_seq;
    assert.equal(await catalog.exited, 1, catalog.stderr());
    // Markers written since the role moved are left for its new holder: none was acked here.
    const { ack_floor } = await jsm.consumers.info(scrapeStream, catalogConsumer);
    assert.ok(ack_floor.stream_seq <= lastBefore, `${ack_floor.stream_seq} > ${lastBefore}`);
    assert.match(
      catalog.stderr(),
      /this node no longer holds the catalog role of system east: node z \(host elsewhere, since [^)]+\) holds it now/,
    );
  });
});
