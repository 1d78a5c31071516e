/**
 * The node-space ops endpoints (spec: Subject table `ops.pprof`, `ops.version`,
 * `ops.version.check`, `ops.nats.info`, `ops.metrics`; Versioning 3) on a real node with its
 * embedded sink. The update check asks a local HTTP server standing in for the npm registry,
 * then one that cannot be reached. `ops.metrics` must pass Prometheus's own `promtool`.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { headers, type NatsConnection } from "@nats-io/nats-core";
import {
  API_VERSION_HEADER,
  nodeSubjects,
  systemSubjects,
  type NatsInfoReply,
  type PprofReply,
  type VersionCheckReply,
  type VersionReply,
} from "../../src/protocol/index.ts";
import { callApi } from "../harness/api-client.ts";
import { dashboardQueries } from "../harness/dashboard.ts";
import { startHttpReceiver, type HttpReceiver } from "../harness/http-receiver.ts";
import { readProfile } from "../harness/profile.ts";
import { countRows, spawnLocalNode } from "../harness/local-node.ts";
import { REPO_ROOT, type NatsmonProcess } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

const subjects = nodeSubjects("local");

/** The text of ops.metrics, and one sample's value. */
async function metrics(nc: NatsConnection): Promise<string> {
  return (await nc.request(subjects.opsMetrics, "", { timeout: 10_000 })).string();
}
function sample(text: string, name: string, labels: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

describe("node ops endpoints", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let node: NatsmonProcess;
  let nc: NatsConnection;
  let registry: HttpReceiver;

  before(async () => {
    dir = await tempDir();
    registry = await startHttpReceiver();
    registry.respondWith(() => ({
      status: 200,
      body: JSON.stringify({ name: "natsmon", version: "99.0.0" }),
    }));
    ({ node, nc } = await spawnLocalNode(dir.path, [], {
      NATSMON_UPDATE_REGISTRY: registry.url,
      // Any free port: the node says which it took.
      NATSMON_NODE_METRICS_LISTEN: "127.0.0.1:0",
    }));
    await waitFor(async () => (await countRows(nc, "local", "hx.check_runs")) >= 1, {
      timeoutMs: 30_000,
      message: "a checked epoch",
    });
  });

  after(async () => {
    await nc?.close();
    await node?.kill("SIGTERM");
    await registry?.[Symbol.asyncDispose]();
    await dir?.[Symbol.asyncDispose]();
  });

  test("ops.version names the running version, runtime and uptime", async () => {
    const r = await callApi<VersionReply>(nc, subjects.opsVersion);
    assert.equal(r.node_id, "local");
    assert.match(r.version, /^\d+\.\d+\.\d+/);
    assert.match(r.node, /^v\d+/);
    assert.ok(r.uptime_seconds >= 0);
  });

  test("ops.version.check asks the registry now and says an update exists", async () => {
    const r = await callApi<VersionCheckReply>(nc, subjects.opsVersionCheck);
    assert.equal(r.status, "update-available");
    assert.equal(r.latest, "99.0.0");
    assert.equal(registry.requests.at(-1)?.path, "/natsmon/latest");
    assert.deepEqual((await callApi<VersionReply>(nc, subjects.opsVersion)).last_check, r);
  });

  test("ops.version.check says unknown, with the reason, when the registry cannot be reached", async () => {
    await registry[Symbol.asyncDispose]();
    const r = await callApi<VersionCheckReply>(nc, subjects.opsVersionCheck);
    assert.equal(r.status, "unknown");
    assert.match(r.reason ?? "", /could not be reached/);
    assert.equal(r.latest, undefined);
  });

  test("ops.nats.info describes the embedded server", async () => {
    const r = await callApi<NatsInfoReply>(nc, subjects.opsNatsInfo);
    assert.equal(r.embedded, true);
    assert.ok(r.pid > 0);
    assert.equal(r.info.server_name, "natsmon-embedded");
    assert.equal(r.info.jetstream, true);
  });

  test("ops.pprof returns a CPU profile for the duration asked, and a heap snapshot", async () => {
    const cpu = await callApi<PprofReply>(nc, subjects.opsPprof, { type: "cpu", duration_ms: 200 });
    assert.equal(cpu.format, ".cpuprofile");
    assert.equal(cpu.encoding, "gzip+base64", "a short CPU profile fits in the reply");
    const profile = await readProfile<{ nodes: unknown[]; startTime: number; endTime: number }>(nc, cpu);
    assert.ok(profile.nodes.length > 0);
    assert.ok(profile.endTime > profile.startTime);
    // A heap snapshot of the node takes seconds, and more on a busy machine.
    const heap = await callApi<PprofReply>(nc, subjects.opsPprof, { type: "heap" }, 60_000);
    assert.equal(heap.format, ".heapsnapshot");
    // In the reply while it fits the embedded bus's 8 MiB, else in the object store.
    const snapshot = await readProfile<{ snapshot: { node_count: number } }>(nc, heap);
    assert.ok(snapshot.snapshot.node_count > 1000);
    await assert.rejects(
      callApi(nc, subjects.opsPprof, { type: "cpu", duration_ms: 600_000 }),
      /^Error: 400 duration_ms/,
    );
    await assert.rejects(callApi(nc, subjects.opsPprof, { type: "thread" }), /^Error: 400 type/);
  });

  test("ops.metrics passes promtool check metrics, and its counters move as epochs fold", async () => {
    const first = await metrics(nc);
    const check = spawnSync("promtool", ["check", "metrics"], { input: first });
    assert.equal(check.status, 0, check.stderr.toString());
    assert.equal(check.stderr.toString(), "");
    for (const name of [
      "natsmon_epochs_folded_total",
      "natsmon_fold_duration_seconds_bucket",
      "natsmon_checks_duration_seconds_count",
      "natsmon_scrape_bytes_total",
      "natsmon_api_requests_total",
      "natsmon_commit_consumer_pending",
    ]) {
      assert.match(first, new RegExp(`^${name}\\{`, "m"), name);
    }
    const before = sample(first, "natsmon_epochs_folded_total", 'system="local"');
    assert.ok(before >= 1);
    assert.ok(sample(first, "natsmon_scrape_bytes_total", 'source="varz"') > 0);
    await waitFor(
      async () => sample(await metrics(nc), "natsmon_epochs_folded_total", 'system="local"') > before,
      {
        message: "the epochs counter to grow",
      },
    );
    const requests = sample(
      await metrics(nc),
      "natsmon_api_requests_total",
      'endpoint="ops.version",outcome="ok"',
    );
    assert.ok(requests >= 2);
  });

  test("GET /metrics at node.metrics-listen serves what ops.metrics does and the system's figures, and nothing else is served", async () => {
    const url = /Its metrics, for Prometheus to scrape: (http:\/\/127\.0\.0\.1:\d+\/metrics)\n/.exec(
      node.stdout(),
    )?.[1];
    assert.ok(url, `the node names its metrics URL:\n${node.stdout()}`);
    assert.match(node.stdout() + node.stderr(), /"msg":"metrics served over HTTP"/);
    const response = await fetch(url);
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    const check = spawnSync("promtool", ["check", "metrics"], { input: text });
    assert.equal(check.status, 0, check.stderr.toString());
    // ops.metrics's families, then the monitored system's figures (node.metrics-nats, all by default).
    const names = (t: string) => new Set(t.split("\n").filter((l) => l.startsWith("# TYPE")));
    const own = names(await metrics(nc));
    const figures = [...names(text)].filter((n) => !own.has(n));
    assert.deepEqual(new Set([...names(text)].filter((n) => own.has(n))), own, "every metric of ops.metrics");
    assert.ok(figures.length > 0);
    for (const name of figures) assert.match(name, /^# TYPE (nats_|natsmon_nats_epoch_timestamp_seconds )/);
    assert.match(text, /^nats_server_up\{system="local",server="natsmon-embedded"\} 1$/m);
    assert.ok(sample(text, "natsmon_epochs_folded_total", 'system="local"') >= 1);
    // deploy/prometheus's alerts on natsmon read metrics this node serves, by those names.
    const rules = await readFile(join(REPO_ROOT, "deploy/prometheus/natsmon-rules.yml"), "utf8");
    const served = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]));
    const used = new Set([...rules.matchAll(/\bnatsmon_[a-z_]+/g)].map((m) => m[0]));
    assert.ok(used.size >= 8, [...used].join(" "));
    for (const name of used) assert.ok(served.has(name), `${name}, which natsmon-rules.yml reads, is served`);
    // So does deploy/grafana's dashboard (a histogram's series are its _bucket, _sum and _count).
    const dashboard = dashboardQueries(
      JSON.parse(await readFile(join(REPO_ROOT, "deploy/grafana/dashboards/nats.json"), "utf8")),
    ).join("\n");
    const charted = new Set(
      [...dashboard.matchAll(/\b(?:nats|natsmon)_[a-z_]+/g)].map((m) => m[0].replace(/_bucket$/, "")),
    );
    assert.ok(charted.size >= 30, [...charted].join(" "));
    for (const name of charted) assert.ok(served.has(name), `${name}, which the dashboard charts, is served`);
    assert.equal((await fetch(new URL("/", url))).status, 404);
    assert.equal((await fetch(url, { method: "POST" })).status, 404);
  });

  test("feed.memory stays silent while the memory profiler is disabled (the default)", async () => {
    const samples: unknown[] = [];
    const sub = nc.subscribe(systemSubjects("local").feedMemory, {
      callback: (_, m) => void samples.push(m),
    });
    const count = () => countRows(nc, "local", "hx.epochs");
    const start = await count();
    // Three scrape intervals (1 s each) pass: longer than the profiler's 2 s default interval.
    await waitFor(async () => (await count()) >= start + 3, { message: "three more epochs" });
    sub.unsubscribe();
    assert.deepEqual(samples, []);
  });

  test("an unsupported Monitor-Api-Version is refused with 400 on node endpoints too", async () => {
    const h = headers();
    h.set(API_VERSION_HEADER, "9");
    const reply = await nc.request(subjects.opsVersion, "", { timeout: 5_000, headers: h });
    assert.equal(reply.headers?.get("Nats-Service-Error-Code"), "400");
    assert.match(reply.headers?.get("Nats-Service-Error") ?? "", /Monitor-Api-Version 9 is not supported/);
  });
});
