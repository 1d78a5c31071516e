/**
 * Reading the latest message of every subject ends even when messages pending at its start
 * are deleted before they are delivered (outbox pruning deletes without replacing), and reads
 * everything, in pulls, when nothing is deleted. Real nats-server with JetStream.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { latestPerSubject } from "../../../src/bus/index.ts";
import { startTestServer, type TestServer } from "../../harness/start-nats-server.ts";

let server: TestServer;
let nc: NatsConnection;

before(async () => {
  server = await startTestServer("latest");
  nc = await connect({ servers: server.url });
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: "LATEST", subjects: ["latest.>"], max_msgs_per_subject: 1 });
  const js = jetstream(nc);
  // 1,500 subjects, then a newer message on the first 10: their first ones are superseded.
  for (let i = 0; i < 1_500; i += 100) {
    await Promise.all(Array.from({ length: 100 }, (_, j) => js.publish(`latest.${i + j}`, `${i + j}`)));
  }
  for (let i = 0; i < 10; i++) await js.publish(`latest.${i}`, `${i} again`);
});

after(async () => {
  await nc?.close();
  await server?.[Symbol.asyncDispose]();
});

test("every subject's latest message, once, past one pull", async () => {
  const seen = new Map<string, string>();
  for await (const m of latestPerSubject(nc, "LATEST", "latest.>")) {
    assert.ok(!seen.has(m.subject), `${m.subject} once`);
    seen.set(m.subject, m.string());
  }
  assert.equal(seen.size, 1_500);
  assert.equal(seen.get("latest.3"), "3 again");
  assert.equal(seen.get("latest.1400"), "1400");
});

test("messages deleted after the read began, before they came, end the read instead of holding it", async () => {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info("LATEST");
  const read: string[] = [];
  for await (const m of latestPerSubject(nc, "LATEST", "latest.>")) {
    if (read.length === 0) {
      // The first pull has brought its messages; everything after them goes.
      for (let seq = m.seq + 1_000; seq <= info.state.last_seq; seq++) {
        await jsm.streams.deleteMessage("LATEST", seq, false).catch(() => false);
      }
    }
    read.push(m.subject);
  }
  assert.ok(read.length >= 1 && read.length < 1_500, `${read.length} read before the deleted tail`);
});

test("a read, whole or broken off, leaves no consumer on the stream", async () => {
  const jsm = await jetstreamManager(nc);
  for await (const _ of latestPerSubject(nc, "LATEST", "latest.>"));
  for await (const _ of latestPerSubject(nc, "LATEST", "latest.>")) break;
  for await (const _ of latestPerSubject(nc, "LATEST", "latest.none.>"));
  assert.equal((await jsm.streams.info("LATEST")).state.consumer_count, 0);
});
