/**
 * A node's role claims across natsmon's own restart of its embedded sink (EmbeddedSink.restart,
 * what node/sink-recovery.ts does to a server stuck after its disk filled up): frozen long
 * enough for the claims to lapse, the server is killed and started again, and the node claims
 * its roles again, naming the restart rather than blaming itself for refreshing late.
 * Real embedded nats-server; SIGSTOP stands in for its JetStream stuck on a full disk.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  claimsBucketConfig,
  connectNats,
  startEmbeddedSink,
  startRoleClaims,
} from "../../../src/bus/index.ts";
import { Role } from "../../../src/domain/index.ts";
import { tempDir } from "../../harness/temp-dir.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { captureLog, type LogLine as CapturedLine } from "../../harness/capture-log.ts";

interface LogLine extends CapturedLine {
  readonly level: number;
  readonly msg: string;
  readonly key?: string;
  readonly restart_cause?: string;
}

const SINK = { replicas: 1, embedded: { host: "127.0.0.1", port: -1 } } as const;

test("a claim that lapsed while natsmon restarted its stuck embedded sink is claimed again, naming the restart", async () => {
  await using dir = await tempDir();
  await using sink = await startEmbeddedSink(SINK, dir.path);
  const nc = await connectNats(sink.sink, "claims across a restart");
  const { log, lines } = captureLog<LogLine>("trace");
  const lost: string[] = [];
  const claims = await startRoleClaims({
    nc,
    replicas: 1,
    holder: { nodeId: "a", host: "a.example", version: "0.0.1" },
    log,
    onLost: (systemId, role) => lost.push(`${systemId}.${role}`),
    sinkRestart: () => sink.lastRestart(),
  });
  try {
    assert.equal((await claims.claim("east", Role.Catalog)).held, true);
    const lapseMs = (await claimsBucketConfig(1)).max_age / 1_000_000;

    // Stuck: every write of the claim from now on fails, so its last stored one is older than this.
    sink.server.kill("SIGSTOP");
    const stuckAt = Date.now();
    await waitFor(() => lines.some((l) => /cannot refresh the role claim on the sink/.test(l.msg)), {
      message: "a refresh failing on the stuck sink",
      timeoutMs: 30_000,
    });
    // Past the claim's lapse (the bucket's max_age): the restarted server expires it as it recovers.
    await waitFor(() => Date.now() - stuckAt > lapseMs, {
      message: "the claim's lapse",
      timeoutMs: lapseMs * 2,
    });
    await sink.restart("its JetStream was stuck");

    const again = await waitFor(() => lines.find((l) => /claimed again/.test(l.msg)), {
      message: "the claim taken again after the restart",
      timeoutMs: 60_000,
    });
    assert.match(
      again.msg,
      /^the embedded bus was restarted at \S+ \(natsmon restarted its nats-server: its JetStream was stuck\); the role claim lapsed while it was down; claimed again$/,
      "names why the server was restarted",
    );
    assert.equal(again.restart_cause, "its JetStream was stuck");
    assert.deepEqual(
      lines.filter((l) => /late refreshing/.test(l.msg)),
      [],
      "nothing says this node was late",
    );
    assert.equal(await claims.confirm("east", Role.Catalog), true);
    assert.deepEqual(lost, []);
  } finally {
    await claims[Symbol.asyncDispose]();
    await nc.close();
  }
});
