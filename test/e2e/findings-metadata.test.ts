/**
 * Per-stream and per-consumer `io.nats.monitor.*` thresholds, and a dynamic-severity check
 * moving from warning to critical, through the whole pipeline to the finding feed.
 *
 * Stream and consumer metadata exist from nats-server 2.10; the only server on these
 * machines is 2.9.10, which drops the field. So the monitored system here is the simulator
 * claiming 2.10.22, answering `$SYS` on a real nats-server, and the test edits its streams
 * and consumers between scrapes; everything else (bus, scrape, stream, fold, checks, diff,
 * KV baseline, feed) is real.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { silentLogger } from "../../src/lib/index.ts";
import { PROFILES, startSimulator, type Simulator } from "../../src/simulate/index.ts";
import { sqlQuery } from "../harness/api-client.ts";
import { subscribeFindingFeed, transitionTail, type FindingFeed } from "../harness/finding-feed.ts";
import { spawnNatsmon, type NatsmonProcess } from "../harness/natsmon-process.ts";
import { startTestServer, type TestServer } from "../harness/start-nats-server.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

describe("io.nats.monitor.* thresholds and a severity change, on a simulated 2.10 system", () => {
  let bus: TestServer;
  let simNc: NatsConnection;
  let sim: Simulator;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let node: NatsmonProcess;
  let nc: NatsConnection;
  let feed: FindingFeed;

  before(async () => {
    bus = await startTestServer("simbus");
    simNc = await connect({ servers: bus.url });
    sim = await startSimulator(simNc, PROFILES.small, silentLogger(), { version: "2.10.22" });
    dir = await tempDir();
    const config = join(dir.path, "natsmon.yaml");
    await writeFile(
      config,
      [
        `node: {data-dir: ${JSON.stringify(join(dir.path, "data"))}}`,
        "sink: {embedded: {port: -1}}",
        `system: {id: sim, nats: {url: ${JSON.stringify(bus.url)}}}`,
        "scraper: {interval: 1s}",
      ].join("\n"),
    );
    node = spawnNatsmon(["run", "--config", config]);
    nc = await connect({ servers: await node.waitForUrl() });
    feed = subscribeFindingFeed(nc, "sim");
    await waitFor(
      async () =>
        (await sqlQuery<{ n: number }>(nc, "sim", "SELECT count(*) AS n FROM hx.check_runs"))[0]!.n >= 2,
      { timeoutMs: 30_000, message: "two checked epochs" },
    );
  });

  after(async () => {
    await feed?.[Symbol.asyncDispose]();
    await nc?.close();
    await node?.kill("SIGTERM");
    await sim?.[Symbol.asyncDispose]();
    await simNc?.close();
    await bus?.[Symbol.asyncDispose]();
    await dir?.[Symbol.asyncDispose]();
  });

  test("msgs-warn and msgs-critical on a stream: firing at warning, changed to critical, resolved when lifted", async () => {
    const stream = sim.system.streams.find((s) => s.name === "STREAM_1")!;
    const name = `${stream.account}/${stream.name}`;
    const setMessages = (n: number) => {
      stream.messages = n;
      stream.bytes = n * 120;
    };
    stream.metadata = {
      "io.nats.monitor.msgs-warn": "1000000000",
      "io.nats.monitor.msgs-critical": "2000000000",
    };
    const from = feed.received.length;
    setMessages(1_500_000_000);
    const warned = await feed.next((t) => t.code === "jetstream-024" && t.entity_name === name, {
      from,
      message: "jetstream-024 firing at warning",
    });
    assert.equal(transitionTail(warned.subject), "firing.warning.jetstream-024");
    assert.equal(warned.transition.entity_type, "stream");

    const later = feed.received.length;
    setMessages(2_500_000_000);
    const critical = await feed.next((t) => t.code === "jetstream-024" && t.entity_name === name, {
      from: later,
      message: "jetstream-024 changed to critical",
    });
    assert.equal(transitionTail(critical.subject), "changed.critical.jetstream-024");
    assert.equal(critical.transition.prev_severity, "warning");
    assert.equal(critical.transition.starts_at, warned.transition.starts_at, "the finding stayed up");
    assert.equal(critical.transition.ends_at, undefined);

    const lifted = feed.received.length;
    delete stream.metadata;
    const resolved = await feed.next((t) => t.code === "jetstream-024" && t.entity_name === name, {
      from: lifted,
      message: "jetstream-024 resolved",
    });
    assert.equal(transitionTail(resolved.subject), "resolved.critical.jetstream-024");
    assert.equal(resolved.transition.starts_at, warned.transition.starts_at);
    const between = feed.received
      .slice(from)
      .filter((r) => r.transition.code === "jetstream-024" && r.transition.entity_name === name);
    assert.deepEqual(
      between.map((r) => r.transition.status),
      ["firing", "changed", "resolved"],
      "nothing is published while the finding stays the same",
    );
  });

  test("redelivery-critical on a consumer fires consumer-011; a threshold of 0 turns it off and resolves it", async () => {
    const stream = sim.system.streams.find((s) => s.name === "STREAM_1")!;
    const consumer = stream.consumers.find((c) => c.name === "C_1")!;
    const name = `${stream.account}/${stream.name}/${consumer.name}`;
    const from = feed.received.length;
    consumer.redelivered = 1_000;
    consumer.metadata = { "io.nats.monitor.redelivery-critical": "500" };
    const fired = await feed.next((t) => t.code === "consumer-011" && t.entity_name === name, {
      from,
      message: "consumer-011 firing",
    });
    assert.equal(transitionTail(fired.subject), "firing.critical.consumer-011");
    assert.equal(fired.transition.entity_type, "consumer");

    const off = feed.received.length;
    consumer.metadata = { "io.nats.monitor.redelivery-critical": "0" };
    const resolved = await feed.next((t) => t.code === "consumer-011" && t.entity_name === name, {
      from: off,
      message: "consumer-011 resolved",
    });
    assert.equal(transitionTail(resolved.subject), "resolved.critical.consumer-011");
  });
});
