/**
 * Finding transitions of real faults on a real 3-node JetStream cluster (nats-server 2.9.10),
 * through the whole pipeline (scrape → stream → fold → checks → diff → feed) to a
 * subscriber of `feed.finding.>` on the sink bus. The sink is a server of its own, so the
 * subscriber and the KV baseline outlive natsmon restarts. A threshold of 0 makes server-011
 * fire on every server from the first epoch on: a finding that stays up throughout. A webhook
 * endpoint on a real HTTP receiver gets the same faults as alerts.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { connect as tcpConnect, type Socket } from "node:net";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { sqlQuery } from "../harness/api-client.ts";
import { subscribeFindingFeed, transitionTail, type FindingFeed } from "../harness/finding-feed.ts";
import { spawnNatsmon, type NatsmonProcess } from "../harness/natsmon-process.ts";
import { startTestCluster, type TestCluster } from "../harness/start-nats-cluster.ts";
import {
  APP_USER,
  SYS_USER,
  portOf,
  startTestServer,
  type TestServer,
} from "../harness/start-nats-server.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";
import { startHttpReceiver, type HttpReceiver } from "../harness/http-receiver.ts";
import type { WebhookMessage } from "../../src/protocol/index.ts";

describe("finding transitions of real faults on a 3-node JetStream cluster", () => {
  let cluster: TestCluster;
  let sink: TestServer;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let app: NatsConnection;
  let bus: NatsConnection;
  let feed: FindingFeed;
  let node: NatsmonProcess | undefined;
  let hook: HttpReceiver;

  /** Webhook alerts received since request `from`, as `<status> <alertname> <entity_name>`. */
  const webhookAlerts = (from = 0) =>
    hook.requests
      .slice(from)
      .flatMap((r) => (r.json() as WebhookMessage).alerts)
      .map((a) => `${a.status} ${a.labels.alertname} ${a.annotations.entity_name}`);

  const nodeByName = (name: string) => cluster.nodes.find((n) => n.name === name)!;

  async function writeConfig(file: string, thresholds: boolean): Promise<string> {
    await writeFile(
      file,
      [
        `node: {id: mon1, data-dir: ${JSON.stringify(join(dir.path, "data"))}}`,
        `sink: {url: ${JSON.stringify(sink.url)}}`,
        "system:",
        "  id: east",
        `  nats: {url: ${JSON.stringify(cluster.urls)}, user: ${SYS_USER.user}, password: ${SYS_USER.password}}`,
        ...(thresholds ? ["  check-thresholds: {server-011: {p_warn_percent: 0}}"] : []),
        "scraper: {interval: 1s}",
        "notifications:",
        `  webhook: [{name: ops, url: ${JSON.stringify(`${hook.url}/natsmon`)}, subscriptions: ["scrape-*"]}]`,
      ].join("\n"),
    );
    return file;
  }

  async function checkRuns(): Promise<number> {
    const [row] = await sqlQuery<{ n: number }>(bus, "east", "SELECT count(*) AS n FROM hx.check_runs");
    return row?.n ?? 0;
  }

  /** Waits until `more` further epochs were checked (the API answers only once the node is up). */
  async function epochsChecked(more: number): Promise<void> {
    const start = await waitFor(() => checkRuns().catch(() => undefined), { timeoutMs: 30_000 });
    await waitFor(async () => (await checkRuns()) >= start + more, {
      timeoutMs: 60_000,
      message: `${more} more checked epochs`,
    });
  }

  async function startNode(thresholds = true): Promise<void> {
    node = spawnNatsmon(["run", "--config", await writeConfig(join(dir.path, "natsmon.yaml"), thresholds)]);
  }

  async function stopNode(): Promise<void> {
    await node?.kill("SIGTERM");
    node = undefined;
  }

  before(async () => {
    cluster = await startTestCluster({ size: 3 });
    sink = await startTestServer("sink");
    dir = await tempDir();
    hook = await startHttpReceiver();
    app = await connect({ servers: cluster.urls.split(","), user: APP_USER.user, pass: APP_USER.password });
    // Creating replicated assets on a fresh cluster can outlast the API's 5 s default while the
    // other test files load both CPUs; this is set-up, not what is tested.
    const jsm = await jetstreamManager(app, { timeout: 30_000 });
    await jsm.streams.add({ name: "ORDERS", subjects: ["orders.>"], num_replicas: 3 });
    await jsm.consumers.add("ORDERS", { durable_name: "proc", ack_policy: AckPolicy.Explicit });
    const js = jetstream(app);
    for (let i = 0; i < 10; i++) await js.publish(`orders.${i}`, `order ${i}`);
    bus = await connect({ servers: sink.url });
    feed = subscribeFindingFeed(bus, "east");
    await startNode();
    await epochsChecked(2);
  });

  after(async () => {
    await stopNode();
    await feed?.[Symbol.asyncDispose]();
    await bus?.close();
    await app?.close();
    await cluster?.[Symbol.asyncDispose]();
    await sink?.[Symbol.asyncDispose]();
    await hook?.[Symbol.asyncDispose]();
    await dir?.[Symbol.asyncDispose]();
  });

  test("the first epoch of an empty catalog establishes the baseline and publishes nothing", () => {
    const server011 = feed.received.filter((r) => r.transition.code === "server-011");
    assert.deepEqual(server011, [], "server-011 fires from the first epoch on, so it is never announced");
  });

  test("a stopped server fires scrape-001 and its consumer replica consumer-001; restarted, they resolve and server-008 fires", async () => {
    const from = feed.received.length;
    await nodeByName("n3").stop();
    const missing = await feed.next((t) => t.code === "scrape-001" && t.entity_name === "n3", {
      from,
      message: "scrape-001 firing for n3",
    });
    assert.equal(transitionTail(missing.subject), "firing.critical.scrape-001");
    assert.equal(missing.transition.entity_type, "server");
    const replica = await feed.next((t) => t.code === "consumer-001" && t.entity_name.endsWith("proc@n3"), {
      from,
      message: "consumer-001 firing for proc's replica on n3",
    });
    assert.equal(transitionTail(replica.subject), "firing.critical.consumer-001");
    assert.equal(replica.transition.entity_type, "consumer_replica");

    const back = feed.received.length;
    await nodeByName("n3").start();
    const answered = await feed.next((t) => t.code === "scrape-001" && t.entity_name === "n3", {
      from: back,
      message: "scrape-001 resolved for n3",
    });
    assert.equal(transitionTail(answered.subject), "resolved.critical.scrape-001");
    assert.equal(answered.transition.starts_at, missing.transition.starts_at, "starts_at is carried");
    assert.ok(answered.transition.ends_at && answered.transition.ends_at > answered.transition.starts_at);
    const restarted = await feed.next((t) => t.code === "server-008" && t.entity_name === "n3", {
      from: back,
      message: "server-008 firing for n3",
    });
    assert.equal(transitionTail(restarted.subject), "firing.critical.server-008");
    await feed.next(
      (t) => t.code === "consumer-001" && t.status === "resolved" && t.entity_name.endsWith("proc@n3"),
      {
        from: back,
        message: "consumer-001 resolved for proc's replica on n3",
      },
    );
    const lost = feed.received
      .slice(from)
      .filter((r) => r.transition.code === "server-011" && r.transition.entity_name === "n3");
    assert.deepEqual(lost, [], "a finding of a server that did not answer is kept, not resolved");
  });

  test("the webhook endpoint received the stopped server as a firing alert, then its resolve", async () => {
    await waitFor(() => webhookAlerts().includes("resolved scrape-001 n3"), {
      message: "the webhook resolve of scrape-001 for n3",
    });
    const n3 = webhookAlerts().filter((a) => a.endsWith(" scrape-001 n3"));
    assert.deepEqual(n3, ["firing scrape-001 n3", "resolved scrape-001 n3"]);
    const firing = hook.requests
      .map((r) => r.json() as WebhookMessage)
      .find((m) => m.alerts.some((a) => a.annotations.entity_name === "n3"))!;
    assert.equal(firing.status, "firing");
    assert.deepEqual(firing.groupLabels, { system: "east" });
    assert.equal(firing.commonLabels.source, "natsmon");
    assert.ok(
      webhookAlerts().every((a) => a.split(" ")[1]!.startsWith("scrape-")),
      "only the subscribed checks are sent",
    );
  });

  test("an R3 stream losing quorum fires jetstream-008, and resolves once it regains it", async () => {
    await cluster.waitForMeta();
    const from = feed.received.length;
    await Promise.all([nodeByName("n2").stop(), nodeByName("n3").stop()]);
    const lost = await feed.next((t) => t.code === "jetstream-008" && t.status === "firing", {
      from,
      message: "jetstream-008 firing for ORDERS",
    });
    assert.equal(transitionTail(lost.subject), "firing.critical.jetstream-008");
    assert.equal(lost.transition.entity_type, "stream");
    assert.match(lost.transition.entity_name, /ORDERS$/);

    const back = feed.received.length;
    await Promise.all([nodeByName("n2").start(), nodeByName("n3").start()]);
    const regained = await feed.next((t) => t.code === "jetstream-008" && t.status === "resolved", {
      from: back,
      timeoutMs: 90_000,
      message: "jetstream-008 resolved for ORDERS",
    });
    assert.equal(transitionTail(regained.subject), "resolved.critical.jetstream-008");
    assert.equal(regained.transition.entity_pk, lost.transition.entity_pk);
    assert.equal(regained.transition.starts_at, lost.transition.starts_at);
  });

  test("a slow consumer fires server-004 on its server for the epoch it happened in, then resolves", async () => {
    await cluster.waitForMeta();
    const from = feed.received.length;
    const n1 = nodeByName("n1");
    const socket = await stalledSubscriber(portOf(n1.url), "slow.x");
    const publisher = await connect({ servers: n1.url, user: APP_USER.user, pass: APP_USER.password });
    try {
      const chunk = new Uint8Array(512 * 1024);
      // More than the server's 64 MiB per-client pending limit, to a client that reads nothing.
      for (let i = 0; i < 200; i++) publisher.publish("slow.x", chunk);
      await publisher.flush();
      const slow = await feed.next((t) => t.code === "server-004" && t.entity_name === "n1", {
        from,
        message: "server-004 firing for n1",
      });
      assert.equal(transitionTail(slow.subject), "firing.critical.server-004");
      await feed.next((t) => t.code === "server-004" && t.status === "resolved" && t.entity_name === "n1", {
        from,
        message: "server-004 resolved once no new slow consumer was counted",
      });
    } finally {
      socket.destroy();
      await publisher.close();
    }
  });

  test("across node restarts a finding that stays up keeps its starts_at and is not re-published; one that cleared while the node was down resolves on the first epoch", async () => {
    await cluster.waitForMeta();
    const from = feed.received.length;
    await nodeByName("n3").stop();
    const missing = await feed.next((t) => t.code === "scrape-001" && t.entity_name === "n3", {
      from,
      message: "scrape-001 firing for n3",
    });
    await stopNode();
    await nodeByName("n3").start();
    await cluster.waitForMeta();

    const restart = feed.received.length;
    await startNode();
    const cleared = await feed.next((t) => t.code === "scrape-001" && t.entity_name === "n3", {
      from: restart,
      message: "scrape-001 resolved for n3 after the restart",
    });
    assert.equal(transitionTail(cleared.subject), "resolved.critical.scrape-001");
    assert.equal(cleared.transition.starts_at, missing.transition.starts_at);
    const [first] = await sqlQuery<{ epoch: string }>(
      bus,
      "east",
      `SELECT strftime(min(epoch), '%Y-%m-%dT%H:%M:%S.%g') AS epoch FROM hx.check_runs
       WHERE epoch > '${missing.transition.starts_at}'::TIMESTAMPTZ
         AND list_contains(
           (SELECT servers_answered FROM hx.epochs e WHERE e.epoch = check_runs.epoch), 'n3')`,
    );
    assert.ok(
      cleared.transition.ends_at?.startsWith(first!.epoch),
      "resolved on the first epoch n3 answered",
    );
    await epochsChecked(3);
    assert.deepEqual(
      feed.received.slice(restart).filter((r) => r.transition.code === "server-011"),
      [],
      "server-011 stayed up through the restart: nothing is published for it",
    );

    // Without the threshold override server-011 stops firing: its resolves carry the
    // starts_at of the very first epoch, kept through both restarts.
    await stopNode();
    const relaxed = feed.received.length;
    await startNode(false);
    const resolved = await Promise.all(
      ["n1", "n2", "n3"].map((name) =>
        feed.next((t) => t.code === "server-011" && t.entity_name === name, {
          from: relaxed,
          message: `server-011 resolved for ${name}`,
        }),
      ),
    );
    const [firstEpoch] = await sqlQuery<{ epoch: string }>(
      bus,
      "east",
      "SELECT strftime(min(epoch), '%Y-%m-%dT%H:%M:%S.%g') AS epoch FROM hx.check_runs",
    );
    for (const r of resolved) {
      assert.equal(transitionTail(r.subject), "resolved.warning.server-011");
      assert.ok(r.transition.starts_at.startsWith(firstEpoch!.epoch), r.transition.starts_at);
    }
  });
});

/** A raw client of the APP account subscribed to `subject` that stops reading its socket. */
async function stalledSubscriber(port: number, subject: string): Promise<Socket> {
  const socket = tcpConnect(port, "127.0.0.1");
  let text = "";
  await new Promise<void>((resolve, reject) => {
    socket.on("error", reject);
    socket.on("data", (data: Buffer) => {
      text += data.toString();
      if (text.startsWith("INFO") && !text.includes("CONNECT_SENT")) {
        text += "CONNECT_SENT";
        socket.write(
          `CONNECT ${JSON.stringify({ user: APP_USER.user, pass: APP_USER.password, verbose: false, pedantic: false })}\r\nSUB ${subject} 1\r\nPING\r\n`,
        );
      }
      if (text.includes("PONG")) {
        socket.removeAllListeners("data");
        socket.pause();
        resolve();
      }
    });
  });
  return socket;
}
