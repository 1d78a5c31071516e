/**
 * A catalog's watch on its epochs when natsmon started its embedded sink again since the last
 * new marker: the quiet is put down to that restart, naming why the server was restarted (here
 * its unexpected exit, killed by SIGKILL), as the supervisor logged it. Real embedded nats-server.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { jetstreamManager } from "@nats-io/jetstream";
import {
  commitProgress,
  connectNats,
  ensureStream,
  scrapeStreamConfig,
  startEmbeddedSink,
} from "../../../src/bus/index.ts";
import { startEpochWatch } from "../../../src/node/epoch-watch.ts";
import { tempDir } from "../../harness/temp-dir.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { captureLog, type LogLine as CapturedLine } from "../../harness/capture-log.ts";

interface LogLine extends CapturedLine {
  readonly cause?: string;
  readonly restart_cause?: string;
}

const SINK = { replicas: 1, embedded: { host: "127.0.0.1", port: -1 } } as const;

test("no epoch since the embedded server exited and natsmon started it again names the restart and how the server exited", async () => {
  await using dir = await tempDir();
  await using sink = await startEmbeddedSink(SINK, dir.path);
  const nc = await connectNats(sink.sink, "epoch watch across a restart");
  try {
    await ensureStream(await jetstreamManager(nc), await scrapeStreamConfig("restarted", 1));
    const { log, lines } = captureLog<LogLine>("warn");
    const watch = startEpochWatch({
      intervalMs: () => 100,
      progress: () => commitProgress(nc, "restarted"),
      sinkRestart: () => sink.lastRestart(),
      log,
    });
    let warning: LogLine;
    try {
      const first = sink.server;
      first.kill("SIGKILL");
      await waitFor(() => sink.server !== first, { message: "the server started again", timeoutMs: 30_000 });
      warning = await waitFor(() => lines.find((l) => l.cause === "sink-restarted"), {
        message: "the quiet put down to the restart",
        timeoutMs: 60_000,
      });
    } finally {
      await watch.stop();
    }
    assert.match(
      warning.msg,
      /^the embedded bus was restarted at \S+ \(natsmon restarted its nats-server: it exited unexpectedly \(killed by SIGKILL\)\), and no new epoch/,
    );
    assert.equal(warning.restart_cause, "it exited unexpectedly (killed by SIGKILL)");
  } finally {
    await nc.close();
  }
});
