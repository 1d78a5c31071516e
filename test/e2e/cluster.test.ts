import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { systemAssets, systemSubjects, type EpochAnnouncement } from "../../src/protocol/index.ts";
import { startTestCluster, type TestCluster } from "../harness/start-nats-cluster.ts";
import { APP_USER, SYS_USER } from "../harness/start-nats-server.ts";
import { spawnNatsmon, writeMonitorConfig, type NatsmonProcess } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";
import { sqlQuery } from "../harness/api-client.ts";

const query = sqlQuery;

describe("natsmon and a real 3-node JetStream cluster", () => {
  let cluster: TestCluster;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let app: NatsConnection;

  before(async () => {
    cluster = await startTestCluster({ size: 3 });
    dir = await tempDir();
    app = await connect({ servers: cluster.urls.split(","), user: APP_USER.user, pass: APP_USER.password });
    // Creating replicated assets on a fresh cluster can outlast the API's 5 s default while the
    // other test files load both CPUs; this is set-up, not what is tested.
    const jsm = await jetstreamManager(app, { timeout: 30_000 });
    await jsm.streams.add({ name: "ORDERS", subjects: ["orders.>"], num_replicas: 3 });
    await jsm.consumers.add("ORDERS", { durable_name: "proc", ack_policy: AckPolicy.Explicit });
    const js = jetstream(app);
    for (let i = 0; i < 25; i++) await js.publish(`orders.${i}`, `order ${i}`);
  });

  after(async () => {
    await app?.close();
    await cluster?.[Symbol.asyncDispose]();
    await dir?.[Symbol.asyncDispose]();
  });

  test("an embedded-sink node monitoring the cluster records all three servers in an epoch", async () => {
    const config = await writeMonitorConfig({
      path: join(dir.path, "monitor.yaml"),
      dataDir: join(dir.path, "a"),
      system: "east",
      url: cluster.urls,
      user: SYS_USER,
      scraper: "interval: 1s",
    });
    const node: NatsmonProcess = spawnNatsmon(["run", "--config", config]);
    try {
      const nc = await connect({ servers: await node.waitForUrl() });
      try {
        const sub = nc.subscribe(systemSubjects("east").feedEpoch, { max: 1 });
        let epoch = "";
        for await (const m of sub) epoch = m.json<EpochAnnouncement>().epoch;
        const [row] = await query<{ servers_answered: string[]; servers_expected: string[] }>(
          nc,
          "east",
          `SELECT servers_answered, servers_expected FROM hx.epochs WHERE epoch = '${epoch}'::TIMESTAMPTZ`,
        );
        assert.deepEqual(row?.servers_answered, ["n1", "n2", "n3"]);
        const servers = await query<{ server: string; cluster: string; healthz_status: string }>(
          nc,
          "east",
          `SELECT server, cluster, healthz_status FROM hx.servers WHERE epoch = '${epoch}'::TIMESTAMPTZ ORDER BY server`,
        );
        assert.deepEqual(
          servers.map((s) => [s.server, s.cluster]),
          [
            ["n1", "c1"],
            ["n2", "c1"],
            ["n3", "c1"],
          ],
        );
        // Only the leader's copy of the R3 stream and its consumer is kept: one row each.
        const streams = await query<{ stream: string; messages: number; replicas: number; leader: string }>(
          nc,
          "east",
          `SELECT stream, messages, replicas, leader FROM hx.streams WHERE epoch = '${epoch}'::TIMESTAMPTZ AND stream = 'ORDERS'`,
        );
        assert.equal(streams.length, 1);
        assert.equal(streams[0]!.messages, 25);
        assert.equal(streams[0]!.replicas, 3);
        assert.match(streams[0]!.leader, /^n[123]$/);
        const consumers = await query<{ consumer: string; num_pending: number }>(
          nc,
          "east",
          `SELECT consumer, num_pending FROM hx.consumers WHERE epoch = '${epoch}'::TIMESTAMPTZ AND stream = 'ORDERS'`,
        );
        assert.deepEqual(consumers, [{ consumer: "proc", num_pending: 25 }]);
      } finally {
        await nc.close();
      }
    } finally {
      await node.kill("SIGTERM");
    }
  });

  test("a stopped server shows as expected but missing, and keeps its server_pk when it comes back with a new id", async () => {
    // Monitor through n1 only: n3 goes away during the test.
    const config = await writeMonitorConfig({
      path: join(dir.path, "restart.yaml"),
      dataDir: join(dir.path, "c"),
      system: "east",
      url: cluster.nodes[0]!.url,
      user: SYS_USER,
      scraper: "interval: 500ms",
    });
    let node = spawnNatsmon(["run", "--config", config]);
    let nc = await connect({ servers: await node.waitForUrl() });
    const n3 = cluster.nodes[2]!;
    try {
      type Row = { server_pk: number; server_id: string };
      const n3Row = async (where: string) =>
        (
          await query<Row>(
            nc,
            "east",
            `SELECT server_pk, server_id FROM hx.servers WHERE server = 'n3' ${where}`,
          )
        ).at(-1);
      const before = await waitFor(() => n3Row("ORDER BY epoch"), { message: "n3 in an epoch" });
      await n3.stop();
      const missing = await waitFor(
        async () => {
          const rows = await query<{ expected: string[]; answered: string[] }>(
            nc,
            "east",
            "SELECT servers_expected AS expected, servers_answered AS answered FROM hx.epochs ORDER BY epoch DESC LIMIT 1",
          );
          const last = rows[0];
          return last && !last.answered.includes("n3") && last.answered.length > 0 ? last : undefined;
        },
        { message: "an epoch without n3" },
      );
      assert.deepEqual(missing.expected, ["n1", "n2", "n3"]);
      assert.deepEqual(missing.answered, ["n1", "n2"]);
      // A natsmon restart while n3 is down still expects it: the last commit marker says so.
      await nc.close();
      await node.kill("SIGTERM");
      node = spawnNatsmon(["run", "--config", config]);
      nc = await connect({ servers: await node.waitForUrl() });
      const restartedAt = new Date().toISOString();
      const first = await waitFor(
        async () =>
          (
            await query<{ expected: string[]; answered: string[] }>(
              nc,
              "east",
              `SELECT servers_expected AS expected, servers_answered AS answered FROM hx.epochs
                WHERE epoch > '${restartedAt}'::TIMESTAMPTZ ORDER BY epoch LIMIT 1`,
            )
          )[0],
        { message: "an epoch after the restart" },
      );
      assert.deepEqual(first, { expected: ["n1", "n2", "n3"], answered: ["n1", "n2"] });
      const stoppedAt = await query<{ e: string }>(
        nc,
        "east",
        "SELECT max(epoch)::VARCHAR AS e FROM hx.epochs",
      );
      // A natsmon that never saw n3 still expects it: the meta group lists its peers.
      const freshConfig = join(dir.path, "fresh.yaml");
      await writeFile(freshConfig, (await readFile(config, "utf8")).replace('/c"}', '/fresh"}'));
      const fresh = spawnNatsmon(["run", "--config", freshConfig]);
      try {
        const fnc = await connect({ servers: await fresh.waitForUrl() });
        try {
          const epoch = await waitFor(
            async () =>
              (
                await query<{ expected: string[]; answered: string[] }>(
                  fnc,
                  "east",
                  "SELECT servers_expected AS expected, servers_answered AS answered FROM hx.epochs ORDER BY epoch LIMIT 1",
                )
              )[0],
            { message: "the fresh node's first epoch" },
          );
          assert.deepEqual(epoch, { expected: ["n1", "n2", "n3"], answered: ["n1", "n2"] });
        } finally {
          await fnc.close();
        }
      } finally {
        await fresh.kill("SIGTERM");
      }
      await n3.start();
      const after = await waitFor(
        () => n3Row(`AND epoch > '${stoppedAt[0]!.e}'::TIMESTAMPTZ ORDER BY epoch`),
        { timeoutMs: 30_000, message: "n3 back in an epoch" },
      );
      assert.equal(after.server_pk, before.server_pk);
      assert.notEqual(after.server_id, before.server_id, "a restarted nats-server has a new id");
      await cluster.waitForMeta();
    } finally {
      await nc.close();
      await node.kill("SIGTERM");
    }
  });

  test("with the cluster as external sink and sink.replicas 3, the scrape stream is R3 and epochs fold", async () => {
    const config = join(dir.path, "sink.yaml");
    await writeFile(
      config,
      [
        "node: {id: sinknode, data-dir: " + JSON.stringify(join(dir.path, "b")) + "}",
        `sink: {url: ${JSON.stringify(cluster.urls)}, user: ${APP_USER.user}, password: ${APP_USER.password}, replicas: 3}`,
        "system:",
        "  id: prod",
        `  nats: {url: ${JSON.stringify(cluster.urls)}, user: ${SYS_USER.user}, password: ${SYS_USER.password}}`,
        "scraper: {interval: 1s}",
      ].join("\n"),
    );
    const node = spawnNatsmon(["run", "--config", config]);
    try {
      await node.waitForUrl();
      const info = await waitFor(async () => {
        try {
          return await (await jetstreamManager(app)).streams.info(systemAssets("prod").scrapeStream);
        } catch {
          return undefined;
        }
      });
      assert.equal(info.config.num_replicas, 3);
      const rows = await waitFor(async () => {
        const r = await query<{ n: number }>(app, "prod", "SELECT count(*) AS n FROM hx.epochs");
        return r[0]!.n > 0 ? r : undefined;
      });
      assert.ok(rows[0]!.n >= 1);
    } finally {
      await node.kill("SIGTERM");
    }
  });
});
