/**
 * A catalog's watch on its epochs when the sink does not say where the commit markers stand
 * (frozen with SIGSTOP, as a stream leader lost is), against a real nats-server: the quiet is
 * reported with its cause unknown and the read's error, not blamed on the scraper.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { test } from "node:test";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { commitProgress, ensureStream, scrapeStreamConfig } from "../../../src/bus/index.ts";
import { startEpochWatch } from "../../../src/node/epoch-watch.ts";
import { startTestServer } from "../../harness/start-nats-server.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { captureLog, type LogLine as CapturedLine } from "../../harness/capture-log.ts";

interface LogLine extends CapturedLine {
  readonly msg: string;
  readonly cause?: string;
  readonly error?: string;
}

/** SIGSTOP, and wait until the process is stopped: the signal lands a moment after kill() returns. */
async function freeze(pid: number): Promise<void> {
  process.kill(pid, "SIGSTOP");
  await waitFor(async () => (await readFile(`/proc/${pid}/stat`, "utf8")).split(" ")[2] === "T", {
    message: `process ${pid} to be stopped`,
  });
}

test("no epoch while the sink does not say where the markers stand is reported as cause unknown, naming the read's error", async () => {
  await using server = await startTestServer("watch");
  const nc = await connect({ servers: server.url });
  try {
    await ensureStream(await jetstreamManager(nc), await scrapeStreamConfig("watch", 1));
    const { log, lines } = captureLog<LogLine>("warn");
    await freeze(server.process.pid);
    let warning: LogLine;
    try {
      const watch = startEpochWatch({
        intervalMs: () => 100,
        progress: () => commitProgress(nc, "watch"),
        log,
      });
      try {
        warning = await waitFor(() => lines[0], { timeoutMs: 60_000, message: "the quiet to be reported" });
      } finally {
        await watch.stop();
      }
    } finally {
      server.process.kill("SIGCONT");
    }
    assert.equal(warning.cause, "unknown", JSON.stringify(warning));
    assert.match(
      warning.error ?? "",
      /last commit marker in \S+ could not be read from the sink \(TimeoutError/,
    );
    assert.match(
      warning.msg,
      /could not be read from the sink, so whether the scraper is quiet or the consumer/,
    );
  } finally {
    await nc.close();
  }
});
