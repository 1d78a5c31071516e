/**
 * An epoch published while the scrape stream has no leader: a real 3-node 2.9.10 cluster,
 * the stream at 3 replicas. Two of its servers are killed, so no leader can be elected
 * (as during the seconds of an election after a sink server is lost, but for as long as
 * the test needs), and every publish is answered by no one until they are back. The
 * publisher waits that out: the epoch's parts and marker are all stored, once each. Without
 * the retry (forMs 0) the same publish fails, which is how epochs were lost on every sink
 * failover.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import { ensureStream, ScrapePublisher, scrapeStreamConfig } from "../../../src/bus/index.ts";
import { systemAssets, type CommitMarker } from "../../../src/protocol/index.ts";
import { startTestCluster, type ClusterNode, type TestCluster } from "../../harness/start-nats-cluster.ts";
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

/** Kills the two servers `nc` is not connected to: the stream cannot have a leader. */
async function loseQuorum(): Promise<ClusterNode[]> {
  const mine = `nats://${nc.getServer()}`;
  const others = cluster.nodes.filter((n) => n.url !== mine);
  assert.equal(others.length, 2, `nc is on one of the cluster's servers (${mine})`);
  await Promise.all(others.map((n) => n.kill()));
  return others;
}

async function regainQuorum(nodes: readonly ClusterNode[]): Promise<void> {
  await Promise.all(nodes.map((n) => n.start()));
  await cluster.waitForMeta();
  await waitFor(async () => (await jsm.streams.info(STREAM)).cluster?.leader, {
    message: "a scrape stream leader again",
  });
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

const reply = () => ({ source: "varz", server: "n1", data: new TextEncoder().encode("{}") });

test("an epoch written while the stream has no leader is stored whole, once, when it has one again", async () => {
  const retried: string[] = [];
  const publisher = new ScrapePublisher(nc, SYSTEM, {
    forMs: 120_000,
    onRetry: (subject) => retried.push(subject),
  });
  const before = (await jsm.streams.info(STREAM)).state.messages;
  const killed = await loseQuorum();
  const epoch = "2026-11-26T12:00:00.000Z";
  const writing = (async () => {
    const part = await publisher.publishReply(epoch, reply());
    await publisher.publishCommit(marker(epoch, part.seqs));
  })();
  try {
    await waitFor(() => retried.length > 0, { message: "the publish to meet a stream without a leader" });
  } finally {
    await regainQuorum(killed);
  }
  await writing;
  const info = await jsm.streams.info(STREAM);
  assert.equal(info.state.messages - before, 2, "the part and the marker, each stored once");
});

test("without the retry, the same publish fails: the epoch would be lost", async () => {
  const publisher = new ScrapePublisher(nc, SYSTEM, { forMs: 0 });
  const killed = await loseQuorum();
  try {
    await assert.rejects(publisher.publishReply("2026-11-26T12:01:00.000Z", reply()));
  } finally {
    await regainQuorum(killed);
  }
});

test("a stopping node ends the wait at once", async () => {
  // A system whose stream does not exist: every publish is answered by no one.
  const stopping = new AbortController();
  const publisher = new ScrapePublisher(nc, "nostream", {
    forMs: 600_000,
    signal: stopping.signal,
    onRetry: () => stopping.abort(),
  });
  await assert.rejects(
    publisher.publishReply("2026-11-26T12:02:00.000Z", reply()),
    /did not take .* JetStream servers are down or electing no leader/,
  );
});
