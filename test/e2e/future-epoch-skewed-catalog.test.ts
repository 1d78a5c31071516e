/**
 * A catalog node whose clock is an hour behind (startNode's catalogNow): a commit marker is set
 * aside as future-dated only when its epoch is ahead of both that clock and the sink server's
 * clock when it stored the marker. The node runs in this process so its catalog clock can be
 * set; the sink is a real nats-server it also scrapes every second, the catalog a real DuckDB
 * file. Its real epochs, named by the scrape side's correct clock, are an hour ahead of the
 * catalog's clock but not of the sink's: they are folded. A marker named an hour ahead of the
 * real time is ahead of both: it is set aside and counted.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { pino } from "pino";
import { connect } from "@nats-io/transport-node";
import { headers } from "@nats-io/nats-core";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { startNode } from "../../src/node/index.ts";
import {
  nodeSubjects,
  ScrapeHeader,
  systemAssets,
  systemSubjects,
  type CommitMarker,
} from "../../src/protocol/index.ts";
import { sqlQuery } from "../harness/api-client.ts";
import { startTestServer } from "../harness/start-nats-server.ts";
import { selfMonitoringConfig } from "../harness/self-monitoring-config.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

const HOUR_MS = 3_600_000;

interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly epoch?: string;
}

test("with the catalog's clock an hour behind, epochs ahead of it but not of the sink are folded; one ahead of both is set aside", async () => {
  await using dir = await tempDir();
  await using sink = await startTestServer("skew");
  const config = await selfMonitoringConfig({ dir: dir.path, sinkUrl: sink.url, interval: "1s" });
  const lines: LogLine[] = [];
  const log = pino(
    { level: "info" },
    { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) },
  );
  await using node = await startNode(config, { log, catalogNow: () => Date.now() - HOUR_MS });
  assert.ok(node.systems.length > 0);
  const nc = await connect({ servers: sink.url });
  try {
    const epochs = async (where = "true") =>
      (
        await sqlQuery<{ n: number }>(
          nc,
          "local",
          `SELECT count(*)::INTEGER AS n FROM hx.epochs WHERE ${where}`,
        )
      )[0]!.n;
    // Real epochs, an hour ahead of the catalog's clock and not of the sink's: folded.
    await waitFor(async () => (await epochs().catch(() => 0)) >= 2, {
      timeoutMs: 60_000,
      message: "two real epochs folded by the catalog whose clock is behind",
    });
    assert.deepEqual(
      lines.filter((l) => /set aside/.test(l.msg)),
      [],
      "no real epoch was set aside",
    );

    // The last marker again, as a scrape host whose clock is an hour ahead would write it.
    const jsm = await jetstreamManager(nc);
    const subjects = systemSubjects("local");
    const last = await jsm.streams.getMessage(systemAssets("local").scrapeStream, {
      last_by_subj: subjects.scrapeCommit,
    });
    const marker = last!.json<CommitMarker>();
    const future = new Date(Date.now() + HOUR_MS).toISOString();
    const h = headers();
    h.set(ScrapeHeader.Epoch, future);
    const ack = await jetstream(nc).publish(
      subjects.scrapeCommit,
      JSON.stringify({ ...marker, epoch: future, finished_at: future }),
      { headers: h, msgID: `${future}.commit` },
    );
    // Real epochs after it are folded: the catalog got past it.
    await waitFor(async () => (await epochs(`marker_seq > ${ack.seq}`)) >= 1, {
      timeoutMs: 30_000,
      message: "an epoch after the marker named an hour ahead to be folded",
    });
    assert.equal(
      await epochs(`epoch = '${future}'::TIMESTAMPTZ`),
      0,
      "the epoch ahead of both clocks is not folded",
    );
    const setAside = lines.filter((l) => /set aside/.test(l.msg));
    assert.deepEqual(
      setAside.map((l) => [l.level, l.epoch]),
      [[50, future]],
      "only the marker ahead of both clocks is set aside",
    );
    const metrics = (await nc.request(nodeSubjects("cat").opsMetrics, "", { timeout: 10_000 })).string();
    assert.match(
      metrics,
      /natsmon_commit_markers_set_aside_total\{[^}]*reason="future-epoch"[^}]*\} 1\b/,
      metrics,
    );
  } finally {
    await nc.close();
  }
});
