/**
 * A server whose replies to the scraper's broadcasts come later than scraper.quiet is asked
 * again directly, within scraper.timeout, and counts as answering, not as missing or
 * partial. Real 3-node cluster; n3 is frozen (SIGSTOP) across the broadcasts' quiet
 * windows and goes on once the scraper asks it again, so its broadcast replies are late
 * whatever the machine's speed.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { connect } from "@nats-io/transport-node";
import { pino } from "pino";
import type { CommitMarker, ScrapePartRef } from "../../../src/protocol/index.ts";
import { scraperStatusOf } from "../../../src/node/scrape-side.ts";
import { SOURCES, startScraper, type EpochSummary } from "../../../src/scrape/index.ts";
import { startTestCluster } from "../../harness/start-nats-cluster.ts";
import { SYS_USER } from "../../harness/start-nats-server.ts";

/** Scrapes until an epoch satisfies `done`: a server just resumed may miss one quiet window. */
async function waitForEpoch(
  scraper: { scrapeOnce(): Promise<EpochSummary> },
  done: (e: EpochSummary) => boolean,
): Promise<EpochSummary> {
  for (let i = 0; ; i++) {
    const epoch = await scraper.scrapeOnce();
    if (done(epoch) || i === 9) return epoch;
  }
}

test("a server whose broadcast replies come later than scraper.quiet is asked again directly and answers", async () => {
  await using cluster = await startTestCluster();
  const n3 = cluster.nodes[2]!;
  // Through n1 only: n3 is frozen, and the connection must not be using it.
  const sys = await connect({ servers: cluster.nodes[0]!.url, user: SYS_USER.user, pass: SYS_USER.password });
  const markers: CommitMarker[] = [];
  const asks: string[][] = [];
  let resumeOnAsk = true;
  const log = pino(
    { level: "info" },
    {
      write(line: string) {
        const entry = JSON.parse(line) as { msg: string; asks?: string[] };
        if (!entry.asks) return;
        asks.push(entry.asks);
        if (resumeOnAsk) n3.resume();
      },
    },
  );
  const first = Promise.withResolvers<EpochSummary>();
  let seq = 0;
  await using scraper = startScraper({
    systemId: "late",
    monitored: sys,
    sink: {
      publishReply: (_epoch, reply): Promise<ScrapePartRef> =>
        Promise.resolve({ source: reply.source, server: reply.server, seqs: [++seq], bytes: 1 }),
      publishCommit: (marker) => Promise.resolve(markers.push(marker) && ++seq),
    },
    config: {
      intervalMs: 3_600_000,
      quietMs: 300,
      timeoutMs: 30_000,
      disconnectBucketMs: 60_000,
      disconnectHistoryMs: 3_600_000,
      forgetAfterMs: 0,
      stream: { maxAgeMs: 6 * 3_600_000, maxBytes: -1 },
    },
    log,
    sources: SOURCES,
    onEpoch: (summary) => first.resolve(summary),
  });
  try {
    const heard = await first.promise;
    assert.deepEqual(heard.serversAnswered, ["n1", "n2", "n3"]);

    n3.pause();
    asks.length = 0;
    const late = await scraper.scrapeOnce();
    assert.deepEqual(late.serversAnswered, ["n1", "n2", "n3"]);
    assert.deepEqual(late.serversPartial, []);
    const marker = markers.at(-1)!;
    assert.equal(marker.servers_partial, undefined);
    assert.deepEqual(
      marker.errors.filter((e) => e.error.includes("n3")),
      [],
    );
    // Every request a 2.9 server answers, asked of n3 by its id, and each answered.
    const asked = ["varz", "statsz", "jsz", "healthz", "healthz_server", "connz", "connz_closed", "routez"];
    for (const source of [...asked, "gatewayz", "leafz", "subsz", "accountz"]) {
      assert.ok(asks[0]!.includes(`${source}: n3`), `${source} is asked of n3 again`);
      assert.ok(
        marker.asked_again?.some((a) => a.source === source && a.servers.join() === "n3"),
        `${source}: n3 answered when asked again`,
      );
    }
    // Account statistics have no per-server request: they are broadcast once more for n3.
    assert.ok(marker.asked_again?.some((a) => a.source === "accstatz" && a.servers.join() === "n3"));
    assert.deepEqual(late.askedAgain, marker.asked_again);
    // ops.scraper.status tells it too, beside the epoch's partial servers.
    assert.deepEqual(scraperStatusOf("late", scraper).last_epoch?.asked_again, marker.asked_again);
    // Its pages and account details were read from the replies it gave when asked again.
    assert.ok(marker.parts.some((p) => p.source === "jsz" && p.server === "n3"));

    // Frozen for good: asked once more in the next epoch, since it answered the last one,
    // and then left alone, expected and missing, until it answers a broadcast again.
    resumeOnAsk = false;
    n3.pause();
    asks.length = 0;
    const frozen = await scraper.scrapeOnce();
    assert.deepEqual(frozen.serversAnswered, ["n1", "n2"]);
    assert.ok(asks.flat().includes("varz: n3"), "n3 is asked once more");
    asks.length = 0;
    const still = await scraper.scrapeOnce();
    assert.deepEqual(still.serversAnswered, ["n1", "n2"]);
    assert.deepEqual(still.serversExpected, ["n1", "n2", "n3"]);
    assert.deepEqual(asks, [], "a server silent for a whole epoch is not asked again");
    n3.resume();
    const back = await waitForEpoch(scraper, (e) => e.serversAnswered.includes("n3"));
    assert.deepEqual(back.serversPartial, []);
  } finally {
    n3.resume();
    await sys.close();
  }
});
