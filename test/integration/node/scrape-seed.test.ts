/**
 * A scrape side starting while its sink does not answer (frozen with SIGSTOP, as a stream
 * leader lost is), against real nats-servers: the scrape stream's last commit marker is not
 * taken for "none"; the side says it retries, and once the sink is back its first epoch
 * still expects the servers the last one expected.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { test } from "node:test";
import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { ensureStream, scrapeStreamConfig } from "../../../src/bus/index.ts";
import { systemSubjects, type CommitMarker } from "../../../src/protocol/index.ts";
import { startTestServer } from "../../harness/start-nats-server.ts";
import { tempDir } from "../../harness/temp-dir.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { captureLog } from "../../harness/capture-log.ts";
import { externalScrapeSide } from "../../harness/external-scrape-side.ts";

/** SIGSTOP, and wait until the process is stopped: the signal lands a moment after kill() returns. */
async function freeze(pid: number): Promise<void> {
  process.kill(pid, "SIGSTOP");
  await waitFor(async () => (await readFile(`/proc/${pid}/stat`, "utf8")).split(" ")[2] === "T", {
    message: `process ${pid} to be stopped`,
  });
}

test("a scrape side starting while the sink does not answer waits for the last commit marker, and expects the servers it names", async () => {
  await using dir = await tempDir();
  await using monitored = await startTestServer("mon");
  await using sink = await startTestServer("sink");
  const sinkNc = await connect({ servers: sink.url });
  try {
    await ensureStream(await jetstreamManager(sinkNc), await scrapeStreamConfig("seed", 1));
    const epoch = new Date().toISOString();
    const previous: CommitMarker = {
      system_id: "seed",
      epoch,
      finished_at: epoch,
      parts: [],
      servers_expected: ["gone-1", "mon"],
      servers_answered: ["mon"],
      servers_unheard_since: { "gone-1": epoch },
      unsupported: [],
      errors: [],
    };
    await jetstream(sinkNc).publish(systemSubjects("seed").scrapeCommit, JSON.stringify(previous));

    const { log, lines } = captureLog("info");
    await using side = await externalScrapeSide({
      dir: dir.path,
      systemId: "seed",
      monitoredUrl: monitored.url,
      sink: { url: sink.url, nc: sinkNc },
      log,
    });

    await freeze(sink.process.pid);
    let starting: Promise<void>;
    try {
      starting = side.start();
      // Until the side says it retries, or (as it did) starts without waiting.
      await waitFor(
        () =>
          lines.some((l) => l.msg.startsWith("cannot read the scrape stream's last commit marker")) ||
          side.port.status(),
        { timeoutMs: 60_000, message: "the scrape side to retry the marker or to start" },
      );
    } finally {
      sink.process.kill("SIGCONT");
    }
    await starting;
    const status = await waitFor(() => side.port.status().last_epoch && side.port.status(), {
      message: "the first epoch",
    });
    assert.deepEqual(status.last_epoch?.servers_expected, ["gone-1", "mon"], JSON.stringify(lines));
    assert.ok(lines.some((l) => l.msg === "read the scrape stream's last commit marker"));
    assert.ok(!lines.some((l) => l.msg.includes("was not read")), JSON.stringify(lines));
  } finally {
    await sinkNc.close();
  }
});
