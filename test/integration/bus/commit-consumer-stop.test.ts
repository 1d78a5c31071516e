/**
 * The catalog's commit consumer stops at once whether or not its commits were ever iterated
 * (a catalog side stopped before its loop began), and a stopped consumer pulls no more: the
 * next process on the durable gets the marker. Real nats-server with JetStream.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { consumeCommits, ensureStream, scrapeStreamConfig } from "../../../src/bus/index.ts";
import { systemSubjects } from "../../../src/protocol/index.ts";
import { startTestServer, type TestServer } from "../../harness/start-nats-server.ts";

let server: TestServer;
let nc: NatsConnection;

before(async () => {
  server = await startTestServer("consumer-stop");
  nc = await connect({ servers: server.url });
  const jsm = await jetstreamManager(nc);
  for (const id of ["idle", "waiting"]) await ensureStream(jsm, await scrapeStreamConfig(id, 1));
});

after(async () => {
  await nc?.close();
  await server?.[Symbol.asyncDispose]();
});

test("stop() returns when the commits were never iterated, and the stopped consumer pulls no more", async () => {
  const idle = await consumeCommits(nc, "idle", { ackWaitMs: 60_000 });
  await idle.stop();

  // Had its pull gone on, it would hold this marker unacked (one at a time) for the ack wait.
  const commit = await jetstream(nc).publish(
    systemSubjects("idle").scrapeCommit,
    JSON.stringify({ epoch: new Date().toISOString(), parts: [] }),
  );
  const next = await consumeCommits(nc, "idle", { ackWaitMs: 60_000 });
  try {
    for await (const delivery of next.commits) {
      assert.equal(delivery.seq, commit.seq, "the next consumer gets the marker");
      assert.equal(delivery.deliveries, 1, "handed out to no one before");
      await delivery.ack();
      break;
    }
  } finally {
    await next.stop();
  }
});

test("stop() ends an iteration waiting for the next marker", async () => {
  const consumer = await consumeCommits(nc, "waiting", { ackWaitMs: 60_000 });
  let seen = 0;
  const loop = (async () => {
    for await (const _delivery of consumer.commits) seen += 1;
  })();
  await consumer.stop();
  await loop;
  assert.equal(seen, 0, "no marker was written");
});
