/**
 * A scrape publish that an external sink (sink.url) does not take, against real nats-servers:
 * natsmon cannot see that sink's disks, so what it logs names the causes an external sink may
 * have (an election, its storage full, JetStream disabled after a storage failure) and where
 * to look, not an election alone.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { ensureStream, scrapeStreamConfig } from "../../../src/bus/index.ts";
import { systemAssets } from "../../../src/protocol/index.ts";
import { startTestServer } from "../../harness/start-nats-server.ts";
import { tempDir } from "../../harness/temp-dir.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { captureLog } from "../../harness/capture-log.ts";
import { externalScrapeSide } from "../../harness/external-scrape-side.ts";

const CAUSES =
  /a JetStream leader election under way, the sink's storage full, or JetStream disabled on the sink after a storage failure .*check the sink servers' logs and the stream's leader with `nats stream info MON_SCRAPE_ext`/;

test("a publish an external sink does not take is logged with the causes it may have and where to look", async () => {
  await using dir = await tempDir();
  await using monitored = await startTestServer("mon");
  await using sink = await startTestServer("sink");
  const sinkNc = await connect({ servers: sink.url });
  try {
    const jsm = await jetstreamManager(sinkNc);
    await ensureStream(jsm, await scrapeStreamConfig("ext", 1));
    const { log, lines } = captureLog("info");
    await using side = await externalScrapeSide({
      dir: dir.path,
      systemId: "ext",
      monitoredUrl: monitored.url,
      sink: { url: sink.url, nc: sinkNc },
      log,
    });
    await side.start();
    await waitFor(() => side.port.status().last_epoch, { message: "the first epoch" });

    // The stream is gone from the sink: nothing there takes the epoch's messages.
    await jsm.streams.delete(systemAssets("ext").scrapeStream);
    let failure: unknown;
    try {
      await side.port.trigger();
    } catch (err) {
      failure = err;
    }
    const retrying = lines.find((l) => l.msg.startsWith("the scrape stream is not taking messages"));
    assert.ok(retrying, JSON.stringify(lines));
    assert.match(retrying.msg, CAUSES);
    assert.doesNotMatch(retrying.msg, /\(no JetStream leader: an election/);
    assert.ok(failure instanceof Error, `the epoch failed: ${String(failure)}`);
    assert.match(failure.message, CAUSES);
  } finally {
    await sinkNc.close();
  }
});
