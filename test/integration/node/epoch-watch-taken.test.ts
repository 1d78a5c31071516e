/**
 * A catalog's watch on its epochs when another process pulls from its consumer and holds a
 * marker while the scraper goes on writing, against a real nats-server: the newer markers
 * wait behind the one held (one marker in flight at a time), and the quiet is still put down
 * to the other process, not to a consumer that delivers nothing.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { commitProgress, consumeCommits, ensureStream, scrapeStreamConfig } from "../../../src/bus/index.ts";
import { startEpochWatch } from "../../../src/node/epoch-watch.ts";
import { systemSubjects } from "../../../src/protocol/index.ts";
import { startTestServer } from "../../harness/start-nats-server.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { captureLog, type LogLine as CapturedLine } from "../../harness/capture-log.ts";

interface LogLine extends CapturedLine {
  readonly cause?: string;
  readonly last_commit_seq?: number;
  readonly delivered_seq?: number;
}

test("markers waiting behind one another process holds are put down to that process", async () => {
  await using server = await startTestServer("taken");
  const nc = await connect({ servers: server.url });
  const subjects = systemSubjects("taken");
  const marker = () => JSON.stringify({ epoch: new Date().toISOString(), parts: [] });
  try {
    await ensureStream(await jetstreamManager(nc), await scrapeStreamConfig("taken", 1));
    const other = await consumeCommits(nc, "taken", { ackWaitMs: 120_000 });
    const { log, lines } = captureLog<LogLine>("warn");
    // Quiet only once the markers are in place, so the watch looks at them and nothing earlier.
    let armed = false;
    // Its first reading, at start, is what the consumer had handed out before: read before
    // any marker is written, so the held one counts as handed out since.
    let startRead: Promise<unknown> | undefined;
    const watch = startEpochWatch({
      intervalMs: () => (armed ? 100 : 3_600_000),
      progress: (after) => {
        const read = commitProgress(nc, "taken", after);
        startRead ??= read;
        return read;
      },
      log,
    });
    try {
      assert.deepEqual(await startRead, {
        lastCommitSeq: 0,
        deliveredSeq: 0,
        nextCommitSeq: 0,
        ackPending: 0,
        ackWaitMs: 120_000,
      });
      const js = jetstream(nc);
      const held = await js.publish(subjects.scrapeCommit, marker());
      for await (const delivery of other.commits) {
        assert.equal(delivery.seq, held.seq);
        break;
      }
      // The scraper's next epoch: it waits behind the held marker.
      const waiting = await js.publish(subjects.scrapeCommit, marker());
      armed = true;
      const warning = await waitFor(() => lines[0], {
        timeoutMs: 30_000,
        message: "the quiet to be reported",
      });
      assert.equal(warning.cause, "taken-elsewhere", JSON.stringify(warning));
      assert.equal(warning.last_commit_seq, waiting.seq);
      assert.equal(warning.delivered_seq, held.seq);
      assert.match(warning.msg, /handed them to another process/);
    } finally {
      await watch.stop();
      await other.stop();
    }
  } finally {
    await nc.close();
  }
});

test("markers waiting behind one the catalog's earlier run held unacknowledged are put down to the ack wait", async () => {
  await using server = await startTestServer("held");
  const nc = await connect({ servers: server.url });
  const subjects = systemSubjects("held");
  const marker = () => JSON.stringify({ epoch: new Date().toISOString(), parts: [] });
  try {
    await ensureStream(await jetstreamManager(nc), await scrapeStreamConfig("held", 1));
    // The earlier run: it got a marker and was killed before acking it (it never acks here).
    const earlier = await consumeCommits(nc, "held", { ackWaitMs: 120_000 });
    const js = jetstream(nc);
    const held = await js.publish(subjects.scrapeCommit, marker());
    for await (const delivery of earlier.commits) {
      assert.equal(delivery.seq, held.seq);
      break;
    }
    const waiting = await js.publish(subjects.scrapeCommit, marker());
    const { log, lines } = captureLog<LogLine>("warn");
    // This run's watch starts after the earlier run got the marker.
    const watch = startEpochWatch({
      intervalMs: () => 100,
      progress: (after) => commitProgress(nc, "held", after),
      log,
    });
    try {
      const warning = await waitFor(() => lines[0], {
        timeoutMs: 30_000,
        message: "the quiet to be reported",
      });
      assert.equal(warning.cause, "awaiting-redelivery", JSON.stringify(warning));
      assert.equal(warning.last_commit_seq, waiting.seq);
      assert.match(warning.msg, /this catalog's earlier run, stopped without acking it/);
      assert.match(warning.msg, /once its ack wait \(120 s\) has passed/);
    } finally {
      await watch.stop();
      await earlier.stop();
    }
  } finally {
    await nc.close();
  }
});
