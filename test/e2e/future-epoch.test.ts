/**
 * One commit marker whose epoch a scrape host with a clock an hour ahead named (the audit's
 * experiment C): a real node, scraping its embedded bus every second, gets a copy of its last
 * marker with the epoch moved an hour ahead. Folded, that epoch became the findings baseline
 * and every real epoch after it was "older than the baseline": jetstream-003 was in the
 * catalog yet never published. The marker is set aside (not folded), logged as an error
 * naming the clocks, and counted; a finding that fires after it is published on the feed.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { headers } from "@nats-io/nats-core";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import {
  nodeSubjects,
  ScrapeHeader,
  systemAssets,
  systemSubjects,
  type CommitMarker,
} from "../../src/protocol/index.ts";
import { sqlQuery } from "../harness/api-client.ts";
import { subscribeFindingFeed } from "../harness/finding-feed.ts";
import { spawnLocalNode } from "../harness/local-node.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";
import { jsonLogLines } from "../harness/capture-log.ts";

const HOUR_MS = 3_600_000;

test("a marker named an hour ahead is set aside and logged, and a finding fired after it is published", async () => {
  await using dir = await tempDir();
  const { node, nc } = await spawnLocalNode(dir.path);
  try {
    await waitFor(
      async () =>
        (await sqlQuery<{ n: number }>(nc, "local", "SELECT count(*) AS n FROM hx.check_runs"))[0]!.n >= 1,
      { timeoutMs: 30_000, message: "a first checked epoch (the baseline)" },
    );
    await using feed = subscribeFindingFeed(nc, "local");
    const jsm = await jetstreamManager(nc);
    const subjects = systemSubjects("local");
    // The last marker again, as a scrape host whose clock jumped an hour ahead would write it.
    const last = await jsm.streams.getMessage(systemAssets("local").scrapeStream, {
      last_by_subj: subjects.scrapeCommit,
    });
    const marker = last!.json<CommitMarker>();
    const future = new Date(Date.parse(marker.epoch) + HOUR_MS).toISOString();
    const skewed: CommitMarker = { ...marker, epoch: future, finished_at: future };
    const h = headers();
    h.set(ScrapeHeader.Epoch, future);
    const ack = await jetstream(nc).publish(subjects.scrapeCommit, JSON.stringify(skewed), {
      headers: h,
      msgID: `${future}.commit`,
    });
    // Real epochs after it are folded (the catalog got past it, whatever it did with it).
    await waitFor(
      async () =>
        (
          await sqlQuery<{ n: number }>(
            nc,
            "local",
            `SELECT count(*) AS n FROM hx.epochs WHERE marker_seq > ${ack.seq}`,
          )
        )[0]!.n >= 2,
      { timeoutMs: 30_000, message: "epochs after the skewed marker to be folded" },
    );

    // A stream at its message limit fires jetstream-003, which must reach the feed.
    await jsm.streams.add({ name: "FULL", subjects: ["full.>"], max_msgs: 10 });
    const js = jetstream(nc);
    for (let i = 0; i < 10; i++) await js.publish(`full.${i}`, "x");
    const fired = await feed.next((t) => t.code === "jetstream-003" && t.status === "firing", {
      timeoutMs: 60_000,
      message: "jetstream-003 firing on the finding feed",
    });
    assert.match(fired.transition.entity_name, /FULL$/);

    // The skewed epoch is not in the catalog: the latest epoch is a real one.
    const [latest] = await sqlQuery<{ latest: string; future: number }>(
      nc,
      "local",
      `SELECT max(epoch) AS latest, count(*) FILTER (WHERE epoch = '${future}'::TIMESTAMPTZ) AS future FROM hx.epochs`,
    );
    assert.equal(latest!.future, 0);
    assert.ok(Date.parse(latest!.latest) < Date.parse(future), latest!.latest);
    // Logged as an error that names the clocks and what to do, and counted.
    const lines = jsonLogLines<{ level: number; msg: string; epoch?: string; stored_at?: string }>(
      node.stderr(),
    );
    const setAside = lines.filter((l) => l.level === 50 && l.epoch === future);
    assert.equal(setAside.length, 1, JSON.stringify(setAside));
    assert.match(setAside[0]!.msg, /set aside/);
    assert.match(setAside[0]!.msg, /NTP/);
    assert.ok(setAside[0]!.stored_at);
    const metrics = (await nc.request(nodeSubjects("local").opsMetrics, "", { timeout: 10_000 })).string();
    assert.match(
      metrics,
      /natsmon_commit_markers_set_aside_total\{[^}]*reason="future-epoch"[^}]*\} 1\b/,
      metrics,
    );
  } finally {
    await nc.close();
    await node.kill("SIGTERM");
  }
});
