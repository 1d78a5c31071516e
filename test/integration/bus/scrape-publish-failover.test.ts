/**
 * An epoch published while the scrape stream has no leader: a real 3-node 2.9.10 cluster,
 * the stream at 3 replicas, its leader killed just before the epoch is written. The
 * followers need seconds to elect a new leader, and every publish in between is answered
 * by no one. The publisher waits that out: the epoch's parts and marker are all stored,
 * once each. Without the retry (forMs 0) the same publish fails, which is how epochs were
 * lost on every sink failover.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import { ensureStream, ScrapePublisher, scrapeStreamConfig } from "../../../src/bus/index.ts";
import { systemAssets, type CommitMarker } from "../../../src/protocol/index.ts";
import { startTestCluster, type TestCluster } from "../../harness/start-nats-cluster.ts";
import { APP_USER } from "../../harness/start-nats-server.ts";
import { waitFor } from "../../harness/wait-for.ts";

const SYSTEM = "failover";
const STREAM = systemAssets(SYSTEM).scrapeStream;
let cluster: TestCluster;
let nc: NatsConnection;
let jsm: JetStreamManager;

before(async () => {
  cluster = await startTestCluster();
  await cluster.waitForMeta();
  nc = await connect({ servers: cluster.urls.split(","), ...APP_USER, pass: APP_USER.password });
  jsm = await jetstreamManager(nc);
  await ensureStream(jsm, await scrapeStreamConfig(SYSTEM, 3));
});

after(async () => {
  await nc?.close();
  await cluster?.[Symbol.asyncDispose]();
});

/** Kills the scrape stream's leader (not the server `nc` is on) and returns its name. */
async function killStreamLeader(): Promise<string> {
  const leader = await waitFor(async () => (await jsm.streams.info(STREAM)).cluster?.leader, {
    message: "a scrape stream leader",
  });
  const node = cluster.nodes.find((n) => n.name === leader)!;
  await node.kill();
  return leader;
}

function marker(epoch: string, seqs: number[]): CommitMarker {
  return {
    system_id: SYSTEM,
    epoch,
    finished_at: epoch,
    parts: [{ source: "varz", server: "n1", seqs, bytes: 2 }],
    servers_expected: ["n1"],
    servers_answered: ["n1"],
    unsupported: [],
    errors: [],
  };
}

test("an epoch written during a leader election is stored whole, once", async () => {
  const retried: string[] = [];
  const publisher = new ScrapePublisher(nc, SYSTEM, {
    forMs: 30_000,
    onRetry: (subject) => retried.push(subject),
  });
  const before = (await jsm.streams.info(STREAM)).state.messages;
  const killed = await killStreamLeader();
  try {
    const epoch = "2026-11-26T12:00:00.000Z";
    const part = await publisher.publishReply(epoch, {
      source: "varz",
      server: "n1",
      data: new TextEncoder().encode("{}"),
    });
    await publisher.publishCommit(marker(epoch, part.seqs));
    assert.ok(retried.length > 0, "the publish met the election (no leader) and was retried");
    const info = await jsm.streams.info(STREAM);
    assert.notEqual(info.cluster?.leader, killed);
    assert.equal(info.state.messages - before, 2, "the part and the marker, each stored once");
  } finally {
    await cluster.nodes.find((n) => n.name === killed)!.start();
    await cluster.waitForMeta();
  }
});

test("without the retry, the same publish fails: the epoch would be lost", async () => {
  const publisher = new ScrapePublisher(nc, SYSTEM, { forMs: 0 });
  const killed = await killStreamLeader();
  try {
    await assert.rejects(
      publisher.publishReply("2026-11-26T12:01:00.000Z", {
        source: "varz",
        server: "n1",
        data: new TextEncoder().encode("{}"),
      }),
    );
  } finally {
    await cluster.nodes.find((n) => n.name === killed)!.start();
    await cluster.waitForMeta();
  }
});

test("a stopping node ends the wait at once", async () => {
  const stopping = new AbortController();
  const publisher = new ScrapePublisher(nc, SYSTEM, {
    forMs: 60_000,
    signal: stopping.signal,
    onRetry: () => stopping.abort(),
  });
  const killed = await killStreamLeader();
  try {
    await assert.rejects(
      publisher.publishReply("2026-11-26T12:02:00.000Z", {
        source: "varz",
        server: "n1",
        data: new TextEncoder().encode("{}"),
      }),
      /did not take .* JetStream servers are down or electing no leader/,
    );
  } finally {
    await cluster.nodes.find((n) => n.name === killed)!.start();
    await cluster.waitForMeta();
  }
});
