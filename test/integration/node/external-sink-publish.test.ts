/**
 * A scrape publish that an external sink (sink.url) does not take, against real nats-servers:
 * natsmon cannot see that sink's disks, so what it logs names the causes an external sink may
 * have (an election, its storage full, JetStream disabled after a storage failure) and where
 * to look, not an election alone.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { pino } from "pino";
import { ensureStream, scrapeStreamConfig } from "../../../src/bus/index.ts";
import { loadConfig } from "../../../src/config/index.ts";
import { noMetrics } from "../../../src/lib/index.ts";
import { createScrapeSide } from "../../../src/node/scrape-side.ts";
import { systemAssets } from "../../../src/protocol/index.ts";
import { startTestServer, SYS_USER } from "../../harness/start-nats-server.ts";
import { tempDir } from "../../harness/temp-dir.ts";
import { waitFor } from "../../harness/wait-for.ts";

interface LogLine {
  readonly level: number;
  readonly msg: string;
}

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
    const file = join(dir.path, "natsmon.yaml");
    await writeFile(
      file,
      [
        "system:",
        "  id: ext",
        `  nats: {url: ${JSON.stringify(monitored.url)}, user: ${SYS_USER.user}, password: ${SYS_USER.password}}`,
        `sink: {url: ${JSON.stringify(sink.url)}}`,
        "scraper: {interval: 1h}",
      ].join("\n"),
    );
    const loaded = await loadConfig({ file });
    assert.ok(loaded.ok, JSON.stringify(loaded));
    const lines: LogLine[] = [];
    const log = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line) as LogLine) });
    await using side = createScrapeSide({
      sink: sinkNc,
      sinkSystem: undefined,
      externalSink: true,
      system: loaded.config.systems[0]!,
      nodeId: "ext-node",
      metrics: noMetrics(),
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
