import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { Objm } from "@nats-io/obj";
import { Svcm } from "@nats-io/services";
import { startTestCluster, type TestCluster } from "../harness/start-nats-cluster.ts";
import { APP_USER, SYS_USER } from "../harness/start-nats-server.ts";
import { writeMonitorConfig, spawnNatsmon, type NatsmonProcess } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";
import { sqlQuery } from "../harness/api-client.ts";

describe("every source of a real 3-node cluster lands in its tables", () => {
  let cluster: TestCluster;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let app: NatsConnection;
  let node: NatsmonProcess;
  let nc: NatsConnection;

  before(async () => {
    cluster = await startTestCluster({ size: 3 });
    await cluster.waitForMeta();
    dir = await tempDir();
    app = await connect({
      servers: cluster.urls.split(","),
      user: APP_USER.user,
      pass: APP_USER.password,
      name: "orders-app",
    });
    const service = await new Svcm(app).add({ name: "echo", version: "1.0.0" });
    service.addEndpoint("echo", { subject: "svc.echo", handler: (_err, msg) => msg.respond(msg.data) });
    // Creating replicated assets on a fresh cluster can outlast the API's 5 s default while the
    // other test files load both CPUs; this is set-up, not what is tested.
    const jsm = await jetstreamManager(app, { timeout: 30_000 });
    await jsm.streams.add({ name: "ORDERS", subjects: ["orders.>"], num_replicas: 3 });
    await jsm.streams.add({ name: "LOGS", subjects: ["logs.>"], num_replicas: 1 });
    await jsm.consumers.add("ORDERS", { durable_name: "proc", ack_policy: AckPolicy.Explicit });
    const js = jetstream(app, { timeout: 30_000 });
    for (let i = 0; i < 10; i++) await js.publish(`orders.${i}`, `order ${i}`);
    for (let i = 0; i < 4; i++) await js.publish(`logs.${i}`, `line ${i}`);
    const kv = await new Kvm(js).create("settings", { history: 4, replicas: 3 });
    await kv.put("colour", "blue");
    await kv.put("colour", "green");
    await kv.put("size", "large");
    const os = await new Objm(js).create("files", { replicas: 1 });
    await os.putBlob({ name: "readme.txt" }, new TextEncoder().encode("hello object store"));
    const config = await writeMonitorConfig({
      path: join(dir.path, "monitor.yaml"),
      dataDir: join(dir.path, "a"),
      system: "east",
      url: cluster.urls,
      user: SYS_USER,
      scraper: "interval: 1s",
      accounts: [{ name: "APP", ...APP_USER }],
    });
    node = spawnNatsmon(["run", "--config", config]);
    nc = await connect({ servers: await node.waitForUrl() });
  });

  after(async () => {
    await nc?.close();
    await node?.kill("SIGTERM");
    await app?.close();
    await cluster?.[Symbol.asyncDispose]();
    await dir?.[Symbol.asyncDispose]();
  });

  /** The newest epoch in which every server answered and ORDERS' leader reports all its peers current. */
  async function settledEpoch(): Promise<string> {
    return waitFor(
      async () => {
        const [row] = await sqlQuery<{ epoch: string }>(
          nc,
          "east",
          `SELECT r.epoch::VARCHAR AS epoch FROM hx.stream_replicas r JOIN hx.epochs e USING (epoch)
           WHERE r.stream = 'ORDERS' AND len(e.servers_answered) = 3
           GROUP BY r.epoch HAVING count(*) FILTER (WHERE answered AND current AND NOT offline) = 3
           ORDER BY r.epoch DESC LIMIT 1`,
        );
        return row?.epoch;
      },
      { timeoutMs: 30_000, message: "an epoch with ORDERS on three current replicas" },
    );
  }

  test("the R3 stream has three replica rows, one of them the leader; the R1 stream one", async () => {
    const epoch = await settledEpoch();
    type Replica = {
      stream: string;
      server: string;
      is_leader: boolean;
      messages: number;
      behind_leader_seq: number;
    };
    const replicas = await sqlQuery<Replica>(
      nc,
      "east",
      `SELECT stream, server, is_leader, messages, behind_leader_seq FROM hx.stream_replicas
       WHERE epoch = '${epoch}'::TIMESTAMPTZ AND stream IN ('ORDERS', 'LOGS') ORDER BY stream, server`,
    );
    const orders = replicas.filter((r) => r.stream === "ORDERS");
    assert.deepEqual(
      orders.map((r) => r.server),
      ["n1", "n2", "n3"],
    );
    assert.equal(orders.filter((r) => r.is_leader).length, 1);
    for (const r of orders) assert.deepEqual([r.messages, r.behind_leader_seq], [10, 0], r.server);
    const logs = replicas.filter((r) => r.stream === "LOGS");
    assert.equal(logs.length, 1);
    assert.deepEqual([logs[0]!.is_leader, logs[0]!.messages], [true, 4]);

    const consumers = await sqlQuery<{ server: string; is_leader: boolean; num_pending: number }>(
      nc,
      "east",
      `SELECT server, is_leader, num_pending FROM hx.consumer_replicas
       WHERE epoch = '${epoch}'::TIMESTAMPTZ AND consumer = 'proc' ORDER BY server`,
    );
    assert.deepEqual(
      consumers.map((c) => c.server),
      ["n1", "n2", "n3"],
    );
    assert.equal(consumers.filter((c) => c.is_leader).length, 1);
    assert.equal(consumers.find((c) => c.is_leader)!.num_pending, 10);
  });

  test("the KV bucket is in hx.kv_buckets with its history and values", async () => {
    const epoch = await settledEpoch();
    const buckets = await sqlQuery<Record<string, unknown>>(
      nc,
      "east",
      `SELECT bucket, stream, replicas, history, values_stored FROM hx.kv_buckets
       WHERE epoch = '${epoch}'::TIMESTAMPTZ`,
    );
    assert.deepEqual(buckets, [
      { bucket: "settings", stream: "KV_settings", replicas: 3, history: 4, values_stored: 3 },
    ]);
  });

  test("the object store is in hx.object_stores", async () => {
    const epoch = await settledEpoch();
    const stores = await sqlQuery<Record<string, unknown>>(
      nc,
      "east",
      `SELECT bucket, stream, replicas, messages FROM hx.object_stores WHERE epoch = '${epoch}'::TIMESTAMPTZ`,
    );
    // One object: one chunk and one metadata message.
    assert.deepEqual(stores, [{ bucket: "files", stream: "OBJ_files", replicas: 1, messages: 2 }]);
  });

  test("the meta row has three peers, an agreed leader and quorum", async () => {
    const epoch = await settledEpoch();
    const [meta] = await sqlQuery<Record<string, unknown>>(
      nc,
      "east",
      `SELECT leader, leader_agreed, servers_reporting, cluster_size, quorum, peers_offline, quorum_ok, members
       FROM hx.meta WHERE epoch = '${epoch}'::TIMESTAMPTZ`,
    );
    assert.match(String(meta?.leader), /^n[123]$/);
    assert.deepEqual(
      { ...meta, leader: undefined },
      {
        leader: undefined,
        leader_agreed: true,
        servers_reporting: 3,
        cluster_size: 3,
        quorum: 2,
        peers_offline: 0,
        quorum_ok: true,
        members: ["n1", "n2", "n3"],
      },
    );
    const [group] = await sqlQuery<Record<string, unknown>>(
      nc,
      "east",
      `SELECT raft_group, kind, leader, peers FROM hx.raft_groups
       WHERE epoch = '${epoch}'::TIMESTAMPTZ AND kind = 'meta'`,
    );
    assert.deepEqual(group, { raft_group: "_meta_", kind: "meta", leader: meta?.leader, peers: 3 });
  });

  test("servers, routes, sublists, accounts, named connections and the micro service, counted", async () => {
    const epoch = await settledEpoch();
    const at = `WHERE epoch = '${epoch}'::TIMESTAMPTZ`;
    const count = async (from: string) =>
      (await sqlQuery<{ n: number }>(nc, "east", `SELECT count(*)::INTEGER AS n FROM ${from} ${at}`))[0]!.n;
    assert.equal(await count("hx.servers"), 3);
    const [health] = await sqlQuery<{ n: number }>(
      nc,
      "east",
      `SELECT count(*)::INTEGER AS n FROM hx.servers ${at} AND healthz_server_status = 'ok' AND healthz_status = 'ok'`,
    );
    assert.equal(health!.n, 3);
    // Each server routes to the two others (2.9: one route per peer).
    assert.equal(await count("hx.routes"), 6);
    assert.equal(await count("hx.subscription_stats"), 3);
    assert.equal(await count("hx.gateways"), 0);
    assert.equal(await count("hx.leafnodes"), 0);
    const named = await sqlQuery<{ server: string; account: string; authorized_user: string }>(
      nc,
      "east",
      `SELECT server, account, authorized_user FROM hx.connections ${at} AND name = 'orders-app'`,
    );
    assert.equal(named.length, 1);
    assert.deepEqual(
      { ...named[0], server: undefined },
      { server: undefined, account: "APP", authorized_user: "app" },
    );
    // APP has clients on the server the app connected to, and JetStream usage on one row.
    const [app] = await sqlQuery<{ servers: number; streams: number }>(
      nc,
      "east",
      `SELECT count(*)::INTEGER AS servers, max(js_streams)::INTEGER AS streams FROM hx.accounts ${at} AND account = 'APP'`,
    );
    assert.ok(app!.servers >= 1, JSON.stringify(app));
    assert.equal(app!.streams, 4, "ORDERS, LOGS, KV_settings and OBJ_files");
    const services = await sqlQuery<{ account: string; service: string; endpoints: number }>(
      nc,
      "east",
      `SELECT account, service, endpoints FROM hx.services ${at}`,
    );
    assert.deepEqual(services, [{ account: "APP", service: "echo", endpoints: 1 }]);
    const [row] = await sqlQuery<{ errors: string[]; unsupported: string[] }>(
      nc,
      "east",
      `SELECT errors, unsupported FROM hx.epochs ${at}`,
    );
    assert.deepEqual(row, {
      errors: [],
      unsupported: ["idz: n1, n2, n3", "raftz: n1, n2, n3", "ipqueuesz: n1, n2, n3"],
    });
  });
});
