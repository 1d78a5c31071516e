/**
 * Where a system's commit markers stand, as a starved catalog reads them: the last marker
 * written, and the last one its durable consumer handed out to whichever process pulled it.
 * Real nats-server with JetStream.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { commitProgress, consumeCommits, ensureStream, scrapeStreamConfig } from "../../../src/bus/index.ts";
import { systemSubjects } from "../../../src/protocol/index.ts";
import { startTestServer, type TestServer } from "../../harness/start-nats-server.ts";
import { waitFor } from "../../harness/wait-for.ts";

let server: TestServer;
let nc: NatsConnection;
const S = systemSubjects("prog");
const K = systemSubjects("skip");

before(async () => {
  server = await startTestServer("progress");
  nc = await connect({ servers: server.url });
  await ensureStream(await jetstreamManager(nc), await scrapeStreamConfig("prog", 1));
});

after(async () => {
  await nc?.close();
  await server?.[Symbol.asyncDispose]();
});

test("none written, then one written and handed out to another process pulling from the consumer", async () => {
  // Another process's consumer of the same durable: it makes the consumer, and takes what comes.
  const other = await consumeCommits(nc, "prog", { ackWaitMs: 30_000 });
  try {
    assert.deepEqual(await commitProgress(nc, "prog"), {
      lastCommitSeq: 0,
      deliveredSeq: 0,
      nextCommitSeq: 0,
      ackPending: 0,
      ackWaitMs: 30_000,
    });
    const js = jetstream(nc);
    await js.publish(S.scrapePart("varz"), "{}");
    const commit = await js.publish(
      S.scrapeCommit,
      JSON.stringify({ epoch: new Date().toISOString(), parts: [] }),
    );
    for await (const delivery of other.commits) {
      assert.equal(delivery.seq, commit.seq);
      break;
    }
    assert.deepEqual(await commitProgress(nc, "prog"), {
      lastCommitSeq: commit.seq,
      deliveredSeq: commit.seq,
      nextCommitSeq: commit.seq,
      ackPending: 1,
      ackWaitMs: 30_000,
    });
    // Asked from the marker itself: none written after it.
    assert.deepEqual(await commitProgress(nc, "prog", commit.seq), {
      lastCommitSeq: commit.seq,
      deliveredSeq: commit.seq,
      nextCommitSeq: 0,
      ackPending: 1,
      ackWaitMs: 30_000,
    });
  } finally {
    await other.stop();
  }
});

test("parts written while a marker is being folded move the delivered sequence past them once it is acked, with no marker handed out", async () => {
  await ensureStream(await jetstreamManager(nc), await scrapeStreamConfig("skip", 1));
  const js = jetstream(nc);
  const catalog = await consumeCommits(nc, "skip", { ackWaitMs: 30_000 });
  try {
    const commit = await js.publish(
      K.scrapeCommit,
      JSON.stringify({ epoch: new Date().toISOString(), parts: [] }),
    );
    for await (const delivery of catalog.commits) {
      assert.equal(delivery.seq, commit.seq);
      // The scraper's next epoch begins while this one is folded: parts, no marker yet.
      await js.publish(K.scrapePart("varz"), "{}");
      const part = await js.publish(K.scrapePart("jsz"), "{}");
      await delivery.ack();
      const progress = await waitFor(
        async () => {
          const now = await commitProgress(nc, "skip", commit.seq);
          return now.deliveredSeq === part.seq && now;
        },
        { message: "the delivered sequence at the last part" },
      );
      assert.deepEqual(progress, {
        lastCommitSeq: commit.seq,
        deliveredSeq: part.seq,
        nextCommitSeq: 0,
        ackPending: 0,
        ackWaitMs: 30_000,
      });
      break;
    }
  } finally {
    await catalog.stop();
  }
});

test("the first marker after a given one, past the parts between them, while the consumer holds an older one", async () => {
  await ensureStream(await jetstreamManager(nc), await scrapeStreamConfig("next", 1));
  const N = systemSubjects("next");
  const js = jetstream(nc);
  const marker = () => JSON.stringify({ epoch: new Date().toISOString(), parts: [] });
  const other = await consumeCommits(nc, "next", { ackWaitMs: 30_000 });
  try {
    const first = await js.publish(N.scrapeCommit, marker());
    for await (const delivery of other.commits) {
      assert.equal(delivery.seq, first.seq);
      break;
    }
    await js.publish(N.scrapePart("varz"), "{}");
    const second = await js.publish(N.scrapeCommit, marker());
    await js.publish(N.scrapePart("varz"), "{}");
    const third = await js.publish(N.scrapeCommit, marker());
    // The first is held unacked: the others wait behind it.
    assert.deepEqual(await commitProgress(nc, "next", first.seq), {
      lastCommitSeq: third.seq,
      deliveredSeq: first.seq,
      nextCommitSeq: second.seq,
      ackPending: 1,
      ackWaitMs: 30_000,
    });
    assert.equal((await commitProgress(nc, "next", 0)).nextCommitSeq, first.seq);
  } finally {
    await other.stop();
  }
});
