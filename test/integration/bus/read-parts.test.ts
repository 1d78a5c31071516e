/**
 * Reading an epoch's parts back when its marker arrives, from a real nats-server: a part the
 * stream no longer holds is missing, while a sink that does not answer (frozen with SIGSTOP,
 * as a stream leader lost mid-fold is) fails the read instead, and the part reads whole once
 * the sink is back.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { after, before, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import { headers, type NatsConnection } from "@nats-io/nats-core";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import {
  PartReadError,
  consumeCommits,
  ensureStream,
  scrapeStreamConfig,
  type CommitDelivery,
} from "../../../src/bus/index.ts";
import { ScrapeHeader, systemSubjects, type CommitMarker } from "../../../src/protocol/index.ts";
import { startTestServer, type TestServer } from "../../harness/start-nats-server.ts";
import { waitFor } from "../../harness/wait-for.ts";

let server: TestServer;
let nc: NatsConnection;
const S = systemSubjects("parts");

before(async () => {
  server = await startTestServer("parts");
  nc = await connect({ servers: server.url });
  await ensureStream(await jetstreamManager(nc), await scrapeStreamConfig("parts", 1));
});

after(async () => {
  server?.process.kill("SIGCONT");
  await nc?.close();
  await server?.[Symbol.asyncDispose]();
});

/** Publishes a VARZ part of server m1 and a marker listing it and `extraSeqs` as a second part. */
async function publishEpoch(extraSeqs: number[]): Promise<void> {
  const js = jetstream(nc);
  const epoch = new Date().toISOString();
  const h = headers();
  h.set(ScrapeHeader.Epoch, epoch);
  const part = await js.publish(S.scrapePart("varz"), JSON.stringify({ data: { server_name: "m1" } }), {
    headers: h,
  });
  const marker: CommitMarker = {
    system_id: "parts",
    epoch,
    finished_at: epoch,
    parts: [
      { source: "varz", server: "m1", seqs: [part.seq], bytes: 10 },
      ...(extraSeqs.length > 0 ? [{ source: "jsz", server: "m2", seqs: extraSeqs, bytes: 10 }] : []),
    ],
    servers_expected: ["m1", "m2"],
    servers_answered: ["m1", "m2"],
    unsupported: [],
    errors: [],
  };
  await js.publish(S.scrapeCommit, JSON.stringify(marker));
}

/** SIGSTOP, and wait until the process is stopped: the signal lands a moment after kill() returns. */
async function freeze(pid: number): Promise<void> {
  process.kill(pid, "SIGSTOP");
  await waitFor(async () => (await readFile(`/proc/${pid}/stat`, "utf8")).split(" ")[2] === "T", {
    message: `process ${pid} to be stopped`,
  });
}

async function nextDelivery(commits: AsyncIterable<CommitDelivery>): Promise<CommitDelivery> {
  for await (const delivery of commits) return delivery;
  throw new Error("the commit consumer ended");
}

test("a part the sink does not answer for fails the read, and reads whole once the sink is back; a part no longer in the stream is missing", async () => {
  const consumer = await consumeCommits(nc, "parts", { ackWaitMs: 60_000 });
  try {
    await publishEpoch([987654]);
    const delivery = await nextDelivery(consumer.commits);

    // The sink is frozen between the marker's delivery and the read of its parts.
    await freeze(server.process.pid);
    let failure: unknown;
    try {
      await delivery.readParts();
    } catch (err) {
      failure = err;
    } finally {
      server.process.kill("SIGCONT");
    }
    assert.ok(failure instanceof PartReadError, `the read failed: ${String(failure)}`);
    assert.equal(failure.transient, true);
    assert.match(
      failure.message,
      /could not be read from the sink \((varz from m1|jsz from m2), seq \d+: TimeoutError/,
    );

    // Back: the part is there after all; the sequence the stream never held is missing.
    const parts = await delivery.readParts();
    const varz = parts.find((p) => p.source === "varz");
    assert.ok(varz && "text" in varz, JSON.stringify(parts));
    assert.deepEqual(JSON.parse(varz.text), { data: { server_name: "m1" } });
    const jsz = parts.find((p) => p.source === "jsz");
    assert.ok(jsz && "missing" in jsz, JSON.stringify(parts));
    assert.equal(jsz.missing, "seq 987654 is no longer in the stream");
    await delivery.ack();
  } finally {
    await consumer.stop();
  }
});
