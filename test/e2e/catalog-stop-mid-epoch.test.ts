/**
 * A catalog side stopped while it handles an epoch: once the fold is in, it begins nothing
 * more of it (checks, the baseline and outbox on the sink, the ack), so a stop on a sink that
 * does not answer does not wait out one request timeout after another. The marker is not
 * acked, as a crash at that point would leave it; once the side's pull has stopped it is
 * handed back (NAKed), so the next start gets it at once rather than after the ack wait.
 * The node runs in this process so that a fault hook can stop the side at exactly that
 * point; the sink is a real nats-server, the catalog a real DuckDB file.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { pino } from "pino";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { startNode, type RunningNode } from "../../src/node/index.ts";
import { systemAssets } from "../../src/protocol/index.ts";
import { startTestServer } from "../harness/start-nats-server.ts";
import { selfMonitoringConfig } from "../harness/self-monitoring-config.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

interface Line {
  readonly msg: string;
  readonly seq?: number;
}

/** A logger whose lines land in `lines`. */
function capture(lines: Line[]) {
  return pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line) as Line) });
}

test("a catalog side stopped mid-epoch begins nothing more of it after the fold and leaves its marker unacked", async () => {
  await using dir = await tempDir();
  await using sink = await startTestServer("sink");
  const config = await selfMonitoringConfig({ dir: dir.path, sinkUrl: sink.url, interval: "1s" });
  const lines: Line[] = [];
  const log = capture(lines);
  /** The node, once startNode has returned it. */
  const up: { node?: RunningNode } = {};
  let stopped: Promise<void> | undefined;
  await using started = await startNode(config, {
    log,
    faults: {
      // The first fold once the node is up: its catalog side is told to stop right after it.
      afterFold: () => {
        const catalog = up.node?.systems[0]?.catalog;
        if (catalog && !stopped) stopped = Promise.resolve(catalog[Symbol.asyncDispose]());
      },
    },
  });
  up.node = started;
  await waitFor(() => stopped !== undefined, {
    timeoutMs: 60_000,
    message: "an epoch folded after the node started",
  });
  await stopped;
  const stop = lines.find((l) => /the catalog side is stopping/.test(l.msg));
  assert.ok(stop?.seq, `the stop is logged against the epoch's marker: ${JSON.stringify(lines.slice(-20))}`);
  assert.deepEqual(
    lines.filter((l) => l.seq === stop.seq && /checks ran|transitions|baseline/.test(l.msg)),
    [],
    "nothing after the fold ran for that epoch",
  );
  const nc = await connect({ servers: sink.url });
  try {
    const assets = systemAssets("local");
    const info = await (
      await jetstreamManager(nc)
    ).consumers.info(assets.scrapeStream, assets.catalogConsumer);
    assert.equal(info.num_ack_pending, 1, "the marker is left unacked, to come back");
    assert.equal(info.ack_floor.stream_seq < stop.seq, true);
  } finally {
    await nc.close();
  }
});

test("a catalog side stopped mid-epoch hands its marker back, so the next start gets it at once instead of after the ack wait", async () => {
  await using dir = await tempDir();
  await using sink = await startTestServer("sink");
  const config = await selfMonitoringConfig({ dir: dir.path, sinkUrl: sink.url, interval: "1s" });
  // An ack wait of an hour, far past this test's timeout: only the hand-back can bring the
  // marker back to the next start while the test runs.
  const commitAckWaitMs = 3_600_000;
  const first: Line[] = [];
  const up: { node?: RunningNode } = {};
  let stopped: Promise<void> | undefined;
  const node = await startNode(config, {
    log: capture(first),
    commitAckWaitMs,
    faults: {
      afterFold: () => {
        const catalog = up.node?.systems[0]?.catalog;
        if (catalog && !stopped) stopped = Promise.resolve(catalog[Symbol.asyncDispose]());
      },
    },
  });
  up.node = node;
  let seq: number | undefined;
  try {
    await waitFor(() => stopped !== undefined, {
      timeoutMs: 60_000,
      message: "an epoch folded after the node started",
    });
    await stopped;
    seq = first.find((l) => /the catalog side is stopping/.test(l.msg))?.seq;
    assert.ok(seq, `the stop is logged against the epoch's marker: ${JSON.stringify(first.slice(-20))}`);
    assert.ok(
      first.some((l) => l.seq === seq && /is handed back/.test(l.msg)),
      `the stop says it handed the marker back: ${JSON.stringify(first.slice(-20))}`,
    );
  } finally {
    await node[Symbol.asyncDispose]();
  }
  const nc = await connect({ servers: sink.url });
  try {
    const assets = systemAssets("local");
    const jsm = await jetstreamManager(nc);
    const before = await jsm.consumers.info(assets.scrapeStream, assets.catalogConsumer);
    assert.equal(
      before.config.ack_wait,
      commitAckWaitMs * 1_000_000,
      "the consumer waits an hour for an ack",
    );
    assert.ok(before.ack_floor.stream_seq < seq, "the marker left for the stop is not acked");

    const second: Line[] = [];
    await using _again = await startNode(config, { log: capture(second), commitAckWaitMs });
    await waitFor(
      async () =>
        (await jsm.consumers.info(assets.scrapeStream, assets.catalogConsumer)).ack_floor.stream_seq >= seq,
      { timeoutMs: 120_000, message: `the next start acks marker ${seq}` },
    );
    assert.ok(
      second.some((l) => l.seq === seq && /epoch already folded/.test(l.msg)),
      "the next start got the marker again and found its fold done",
    );
  } finally {
    await nc.close();
  }
});
