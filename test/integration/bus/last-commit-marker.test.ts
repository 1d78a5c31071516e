/**
 * Reading where a system's commit markers stand, from a real nats-server: only the server's
 * "no message found" means there is no marker. A sink that does not answer (frozen with
 * SIGSTOP, as a stream leader lost is) or refuses the read (a sink user without the right to
 * get stream messages) fails the read, and the progress figures are not reported as 0.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import {
  CommitMarkerReadError,
  commitProgress,
  consumeCommits,
  ensureStream,
  lastCommitMarker,
  scrapeStreamConfig,
  startNatsServer,
  type NatsServerProcess,
} from "../../../src/bus/index.ts";
import { systemSubjects } from "../../../src/protocol/index.ts";
import { tempDir } from "../../harness/temp-dir.ts";
import { waitFor } from "../../harness/wait-for.ts";

let dir: { path: string } & AsyncDisposable;
let server: NatsServerProcess;
let nc: NatsConnection;
let reader: NatsConnection;
const S = systemSubjects("marks");

before(async () => {
  dir = await tempDir("natsmon-marks-");
  // "reader" may do everything but get a stream's messages: a sink account set up too tightly.
  server = await startNatsServer({
    workDir: dir.path,
    configText: [
      `listen: "127.0.0.1:-1"`,
      `ports_file_dir: ${JSON.stringify(dir.path)}`,
      `jetstream { store_dir: ${JSON.stringify(join(dir.path, "js"))} }`,
      "accounts { APP: { jetstream: enabled, users: [",
      `  {user: owner, password: owner},`,
      `  {user: reader, password: reader, permissions: {publish: {deny: ["$JS.API.STREAM.MSG.GET.>"]}}}`,
      "] } }",
    ].join("\n"),
  });
  nc = await connect({ servers: server.clientUrl, user: "owner", pass: "owner" });
  reader = await connect({ servers: server.clientUrl, user: "reader", pass: "reader" });
  await ensureStream(await jetstreamManager(nc), await scrapeStreamConfig("marks", 1));
});

after(async () => {
  server?.kill("SIGCONT");
  await reader?.close();
  await nc?.close();
  await server?.stop();
  await dir?.[Symbol.asyncDispose]();
});

/** SIGSTOP, and wait until the process is stopped: the signal lands a moment after kill() returns. */
async function freeze(pid: number): Promise<void> {
  process.kill(pid, "SIGSTOP");
  await waitFor(async () => (await readFile(`/proc/${pid}/stat`, "utf8")).split(" ")[2] === "T", {
    message: `process ${pid} to be stopped`,
  });
}

async function failureOf(read: () => Promise<unknown>): Promise<unknown> {
  try {
    return { resolved: await read() };
  } catch (err) {
    return err;
  }
}

test("no marker only when the stream has none; a frozen or refusing sink fails the read, and progress is not 0", async () => {
  const catalog = await consumeCommits(nc, "marks", { ackWaitMs: 30_000 });
  try {
    assert.equal(await lastCommitMarker(nc, "marks"), undefined, "the stream holds no marker yet");
    const written = await jetstream(nc).publish(
      S.scrapeCommit,
      JSON.stringify({ epoch: "2026-01-01T00:00:00Z", parts: [], servers_expected: ["gone-1"] }),
    );
    assert.equal((await lastCommitMarker(nc, "marks"))?.epoch, "2026-01-01T00:00:00Z");
    for await (const delivery of catalog.commits) {
      assert.equal(delivery.seq, written.seq);
      break;
    }

    // Refused: the server answers, and it is no "no message found".
    const refused = await failureOf(() => lastCommitMarker(reader, "marks"));
    assert.ok(refused instanceof CommitMarkerReadError, `the read failed: ${JSON.stringify(refused)}`);
    assert.match(refused.message, /last commit marker in \S+ could not be read from the sink/);
    const progress = await failureOf(() => commitProgress(reader, "marks"));
    assert.ok(progress instanceof CommitMarkerReadError, `progress is unknown: ${JSON.stringify(progress)}`);

    // Frozen: no answer in time, which waiting may cure.
    const pid = server.pid;
    await freeze(pid);
    let frozen: unknown;
    try {
      frozen = await failureOf(() => lastCommitMarker(nc, "marks"));
    } finally {
      process.kill(pid, "SIGCONT");
    }
    assert.ok(frozen instanceof CommitMarkerReadError, `the read failed: ${JSON.stringify(frozen)}`);
    assert.equal(frozen.transient, true);
    assert.match(frozen.message, /TimeoutError/);

    // Back: the marker is there after all.
    const { lastCommitSeq, deliveredSeq, nextCommitSeq } = await commitProgress(nc, "marks");
    assert.deepEqual(
      { lastCommitSeq, deliveredSeq, nextCommitSeq },
      {
        lastCommitSeq: written.seq,
        deliveredSeq: written.seq,
        nextCommitSeq: written.seq,
      },
    );
  } finally {
    await catalog.stop();
  }
});
