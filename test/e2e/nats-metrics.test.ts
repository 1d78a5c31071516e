/**
 * node.metrics-nats: the monitored system's own figures at the node's GET /metrics, read
 * from the catalog's latest epoch, for a real 3-node JetStream cluster: servers, accounts,
 * a replicated stream and its consumer, figures that follow the system from epoch to epoch,
 * a server that stops answering (nats_server_up 0), and the servers / off settings; and
 * Debian's real Prometheus scraping them, answering every query of deploy/grafana's dashboard.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { startTestCluster, type TestCluster } from "../harness/start-nats-cluster.ts";
import { APP_USER, SYS_USER, startTestServer, type TestServer } from "../harness/start-nats-server.ts";
import { dashboardQueries } from "../harness/dashboard.ts";
import {
  REPO_ROOT,
  spawnNatsmon,
  writeMonitorConfig,
  type NatsmonProcess,
} from "../harness/natsmon-process.ts";
import { rawHttpCall } from "../harness/http-call.ts";
import { startPrometheus } from "../harness/start-prometheus.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

/** The samples of a Prometheus text exposition. */
function samples(text: string): Sample[] {
  return text
    .split("\n")
    .filter((line) => line && !line.startsWith("#"))
    .map((line) => {
      const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      assert.ok(match, `a sample line: ${line}`);
      const labels: Record<string, string> = {};
      for (const [, k, v] of (match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[k!] = v!;
      return { name: match[1]!, labels, value: Number(match[3]) };
    });
}

/** The samples named `name` whose labels include `labels`. */
function find(all: readonly Sample[], name: string, labels: Record<string, string> = {}): Sample[] {
  return all.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

function one(all: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = find(all, name, labels);
  assert.equal(found.length, 1, `one ${name} ${JSON.stringify(labels)}: ${JSON.stringify(found)}`);
  return found[0]!.value;
}

/** Starts a node monitoring `url` as `system`, serving GET /metrics with `metrics-nats` as given. */
async function startNode(dir: string, system: string, url: string, metricsNats?: string) {
  const config = await writeMonitorConfig({
    path: join(dir, `${system}.yaml`),
    dataDir: join(dir, system),
    system,
    url,
    user: SYS_USER,
    scraper: "interval: 1s",
  });
  if (metricsNats)
    await writeFile(
      config,
      (await readFile(config, "utf8")).replace(/^node: \{/, `node: {metrics-nats: ${metricsNats}, `),
    );
  const node = spawnNatsmon(["run", "--config", config], { NATSMON_NODE_METRICS_LISTEN: "127.0.0.1:0" });
  await node.waitForUrl();
  const metricsUrl = /Its metrics, for Prometheus to scrape: (\S+)\n/.exec(node.stdout())?.[1];
  assert.ok(metricsUrl, node.stdout());
  return { node, metricsUrl };
}

describe("the monitored system's figures at GET /metrics, on a real 3-node JetStream cluster", () => {
  let cluster: TestCluster;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let app: NatsConnection;
  let node: NatsmonProcess;
  let metricsUrl: string;
  const scrape = async () => samples(await (await fetch(metricsUrl)).text());

  before(async () => {
    cluster = await startTestCluster({ size: 3 });
    dir = await tempDir();
    app = await connect({ servers: cluster.urls.split(","), user: APP_USER.user, pass: APP_USER.password });
    const jsm = await jetstreamManager(app, { timeout: 30_000 });
    await jsm.streams.add({ name: "ORDERS", subjects: ["orders.>"], num_replicas: 3, max_msgs: 1000 });
    await jsm.consumers.add("ORDERS", { durable_name: "proc", ack_policy: AckPolicy.Explicit });
    const js = jetstream(app);
    for (let i = 0; i < 25; i++) await js.publish(`orders.${i}`, `order ${i}`);
    ({ node, metricsUrl } = await startNode(dir.path, "east", cluster.urls));
  });

  after(async () => {
    await app?.close();
    await node?.kill("SIGTERM");
    await cluster?.[Symbol.asyncDispose]();
    await dir?.[Symbol.asyncDispose]();
  });

  test("servers, accounts, the stream and its consumer, as the cluster has them", async () => {
    const all = await waitFor(
      async () => {
        const found = await scrape();
        return find(found, "nats_consumer_pending_messages", { consumer: "proc" }).length > 0 && found;
      },
      { timeoutMs: 30_000, message: "the consumer's figures at /metrics" },
    );
    const text = await (await fetch(metricsUrl)).text();
    const check = spawnSync("promtool", ["check", "metrics"], { input: text });
    assert.equal(check.status, 0, check.stderr.toString());
    assert.match(text, /^# TYPE nats_server_received_messages_total counter$/m);
    assert.match(text, /^# TYPE nats_stream_messages gauge$/m);

    // As Prometheus asks for it, compressed (fetch above asked for gzip too, and decompressed);
    // without Accept-Encoding, plain. The same series either way.
    const raw = async (acceptEncoding?: string) => {
      const response = await rawHttpCall(metricsUrl, {
        headers: acceptEncoding ? { "accept-encoding": acceptEncoding } : {},
      });
      assert.equal(response.status, 200);
      return response;
    };
    const series = (body: string) =>
      body
        .split("\n")
        .filter((l) => l.startsWith("nats_"))
        .map((l) => l.replace(/ [^ ]+$/, ""))
        .sort();
    // Taken again should an epoch land between the two requests and change the series.
    const { gzipped, unpacked } = await waitFor(
      async () => {
        const gzipped = await raw("gzip");
        const plain = await raw();
        assert.equal(gzipped.headers["content-encoding"], "gzip");
        assert.equal(plain.headers["content-encoding"], undefined);
        assert.equal(Number(gzipped.headers["content-length"]), gzipped.body.byteLength);
        assert.ok(gzipped.body.byteLength * 5 < plain.body.byteLength, "compressed to under a fifth");
        const unpacked = spawnSync("gzip", ["-dc"], { input: gzipped.body });
        assert.equal(unpacked.status, 0, unpacked.stderr.toString());
        const same =
          JSON.stringify(series(unpacked.stdout.toString())) ===
          JSON.stringify(series(plain.body.toString()));
        return same && { gzipped, unpacked };
      },
      { timeoutMs: 30_000, message: "the same series compressed and plain" },
    );
    assert.ok(gzipped.body.byteLength > 0);
    assert.equal(spawnSync("promtool", ["check", "metrics"], { input: unpacked.stdout }).status, 0);

    for (const server of ["n1", "n2", "n3"]) {
      assert.equal(one(all, "nats_server_up", { system: "east", server }), 1);
      assert.equal(one(all, "nats_server_info", { server, cluster: "c1", version: "2.9.10" }), 1);
      assert.ok(one(all, "nats_server_memory_bytes", { server }) > 0);
      assert.ok(one(all, "nats_server_jetstream_max_storage_bytes", { server }) > 0);
      assert.equal(
        one(all, "nats_server_jetstream_streams", { server }),
        1,
        "each holds a replica of ORDERS",
      );
    }
    // One meta leader; natsmon's own connection and the application's are counted.
    assert.equal(
      find(all, "nats_server_jetstream_meta_leader").reduce((sum, s) => sum + s.value, 0),
      1,
    );
    assert.ok(find(all, "nats_server_connections").reduce((sum, s) => sum + s.value, 0) >= 2);

    const stream = { system: "east", stream: "ORDERS" };
    assert.equal(one(all, "nats_stream_messages", stream), 25);
    assert.equal(one(all, "nats_stream_last_seq", stream), 25);
    assert.equal(one(all, "nats_stream_replicas", stream), 3);
    assert.equal(one(all, "nats_stream_max_messages", stream), 1000);
    assert.equal(find(all, "nats_stream_max_bytes", stream).length, 0, "no byte limit: left out");
    assert.equal(one(all, "nats_stream_consumers", stream), 1);
    const [info] = find(all, "nats_stream_info", stream);
    assert.match(info?.labels.leader ?? "", /^n[123]$/);
    assert.equal(info?.labels.storage, "file");
    const consumer = { ...stream, consumer: "proc" };
    assert.equal(one(all, "nats_consumer_pending_messages", consumer), 25);
    assert.equal(one(all, "nats_consumer_ack_pending_messages", consumer), 0);

    // The application's account: the stream's storage, and its connection's traffic.
    const account = find(all, "nats_stream_messages", stream)[0]!.labels.account!;
    assert.ok(one(all, "nats_account_jetstream_storage_bytes", { account }) > 0);
    assert.equal(one(all, "nats_account_jetstream_streams", { account }), 1);
    assert.ok(
      find(all, "nats_account_received_messages_total", { account }).reduce((sum, s) => sum + s.value, 0) >=
        25,
    );
    const epoch = one(all, "natsmon_nats_epoch_timestamp_seconds", { system: "east" });
    assert.ok(Math.abs(epoch - Date.now() / 1000) < 120, `a recent epoch: ${epoch}`);
  });

  test("the figures follow the system: messages consumed and acknowledged, then published", async () => {
    const js = jetstream(app);
    const consumer = await js.consumers.get("ORDERS", "proc");
    const batch = await consumer.fetch({ max_messages: 10, expires: 5_000 });
    for await (const m of batch) m.ack();
    for (let i = 25; i < 30; i++) await js.publish(`orders.${i}`, `order ${i}`);
    const received = (all: Sample[]) =>
      find(all, "nats_server_received_messages_total").reduce((sum, s) => sum + s.value, 0);
    const before = received(await scrape());
    const all = await waitFor(
      async () => {
        const found = await scrape();
        return (
          one(found, "nats_stream_messages", { stream: "ORDERS" }) === 30 &&
          one(found, "nats_consumer_pending_messages", { consumer: "proc" }) === 20 &&
          found
        );
      },
      { timeoutMs: 30_000, message: "an epoch with the new messages and the acknowledgements" },
    );
    assert.equal(one(all, "nats_consumer_delivered_stream_seq", { consumer: "proc" }), 10);
    assert.equal(one(all, "nats_consumer_ack_floor_stream_seq", { consumer: "proc" }), 10);
    assert.ok(received(all) > before, "the servers' received-messages counters went up");
  });

  test("a real Prometheus scraping the node answers every query of deploy/grafana's dashboard", async () => {
    await using prometheus = await startPrometheus([new URL(metricsUrl).host]);
    // rate() needs two scrapes within its range: three are waited for.
    await waitFor(
      async () =>
        (await prometheus.query('count_over_time(nats_server_up{system="east"}[1m])')).length === 3 &&
        (await prometheus.query('count_over_time(nats_server_up{system="east",server="n1"}[1m]) >= 3'))
          .length === 1,
      { timeoutMs: 30_000, message: "Prometheus to have scraped the node three times" },
    );
    const dashboard = JSON.parse(
      await readFile(join(REPO_ROOT, "deploy/grafana/dashboards/nats.json"), "utf8"),
    ) as unknown;
    const queries = dashboardQueries(dashboard).map((q) => q.replaceAll("$system", "east"));
    // Nothing to show on a healthy cluster with no notification endpoint, where no check may fire.
    const emptyWhenHealthy = [
      /replicas_offline/,
      /natsmon_notify_attempts_total/,
      /natsmon_findings_firing/,
      /nats_gateway_connected/,
    ];
    for (const query of queries) {
      const result = await prometheus.query(query);
      if (emptyWhenHealthy.some((r) => r.test(query))) continue;
      assert.ok(result.length > 0, `${query} gives series`);
    }
    const [up] = await prometheus.query('sum(nats_server_up{system="east"})');
    assert.equal(up?.value[1], "3");
    const storage = await prometheus.query(
      'nats_server_jetstream_storage_bytes{system="east"} / nats_server_jetstream_max_storage_bytes{system="east"}',
    );
    assert.equal(storage.length, 3, "usage against limit, matched server by server");
  });

  test("a server that stops answering is up 0, and its figures are gone", async () => {
    await cluster.nodes[2]!.stop();
    const all = await waitFor(
      async () => {
        const found = await scrape();
        return one(found, "nats_server_up", { server: "n3" }) === 0 && found;
      },
      { timeoutMs: 60_000, message: "an epoch without n3" },
    );
    assert.equal(one(all, "nats_server_up", { server: "n1" }), 1);
    assert.equal(find(all, "nats_server_info", { server: "n3" }).length, 0);
    assert.equal(find(all, "nats_server_connections", { server: "n3" }).length, 0);
  });

  test("with the whole system down, every server is up 0: the figures do not stand still at their last values", async () => {
    await Promise.all([cluster.nodes[0]!.stop(), cluster.nodes[1]!.stop()]);
    const all = await waitFor(
      async () => {
        const found = await scrape();
        const up = find(found, "nats_server_up");
        return up.length === 3 && up.every((s) => s.value === 0) && found;
      },
      { timeoutMs: 60_000, message: "an epoch no server answered" },
    );
    assert.equal(find(all, "nats_server_info").length, 0);
    assert.equal(find(all, "nats_stream_messages").length, 0);
    const epoch = one(all, "natsmon_nats_epoch_timestamp_seconds", { system: "east" });
    assert.ok(Math.abs(epoch - Date.now() / 1000) < 60, "a recent epoch, not the last one answered");
  });
});

describe("node.metrics-nats: servers leaves out streams and consumers, off serves the node's own metrics only", () => {
  let server: TestServer;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  const nodes: NatsmonProcess[] = [];

  before(async () => {
    server = await startTestServer("s1");
    dir = await tempDir();
    const app = await connect({ servers: server.url });
    await (await jetstreamManager(app, { timeout: 30_000 })).streams.add({ name: "S", subjects: ["s.>"] });
    await app.close();
  });

  after(async () => {
    await Promise.all(nodes.map((n) => n.kill("SIGTERM")));
    await server?.[Symbol.asyncDispose]();
    await dir?.[Symbol.asyncDispose]();
  });

  test("servers and off", async () => {
    const [servers, off] = await Promise.all([
      startNode(dir.path, "srv", server.url, "servers"),
      startNode(dir.path, "off", server.url, "off"),
    ]);
    nodes.push(servers.node, off.node);
    const all = await waitFor(
      async () => {
        const found = samples(await (await fetch(servers.metricsUrl)).text());
        return find(found, "nats_server_up").length > 0 && found;
      },
      { timeoutMs: 30_000, message: "the servers' figures" },
    );
    assert.equal(one(all, "nats_server_up", { system: "srv", server: "s1" }), 1);
    assert.ok(find(all, "nats_account_connections").length > 0);
    assert.equal(all.filter((s) => /^nats_(stream|consumer)_/.test(s.name)).length, 0);

    // The node folds epochs and serves its own metrics, and no figure of the system.
    const own = await waitFor(
      async () => {
        const found = samples(await (await fetch(off.metricsUrl)).text());
        return find(found, "natsmon_epochs_folded_total").length > 0 && found;
      },
      { timeoutMs: 30_000, message: "a folded epoch" },
    );
    assert.equal(own.filter((s) => /^nats(mon_nats)?_/.test(s.name)).length, 0);
  });
});
