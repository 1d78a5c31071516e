/**
 * A scrape whose parts the sink refuses (the sink gone, a publish timed out) fails as a whole
 * and commits nothing, and the refusal never escapes as an unhandled rejection, which would end
 * the node's process, while the scrape still gathers its other sources.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { connect } from "@nats-io/transport-node";
import { pino } from "pino";
import type { CommitMarker, RawReply, ScrapePartRef } from "../../../src/protocol/index.ts";
import { SOURCES, startScraper } from "../../../src/scrape/index.ts";
import { startTestServer, SYS_USER } from "../../harness/start-nats-server.ts";

test("a part the sink refuses while the scrape still gathers fails the scrape, with no unhandled rejection", async () => {
  await using server = await startTestServer("refused");
  const monitored = await connect({ servers: server.url, user: SYS_USER.user, pass: SYS_USER.password });
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on("unhandledRejection", onUnhandled);
  const markers: CommitMarker[] = [];
  const sink = {
    // Refused at once, while the scrape goes on to accountz and asks the server for each account.
    publishReply: (_epoch: string, _reply: RawReply): Promise<ScrapePartRef> =>
      Promise.reject(new Error("the sink is gone")),
    publishCommit: (marker: CommitMarker): Promise<number> => Promise.resolve(markers.push(marker)),
  };
  const scraper = startScraper({
    systemId: "refused",
    monitored,
    sink,
    config: {
      intervalMs: 3_600_000,
      quietMs: 200,
      timeoutMs: 5000,
      disconnectBucketMs: 60_000,
      disconnectHistoryMs: 3_600_000,
      forgetAfterMs: 0,
      stream: { maxAgeMs: 6 * 3_600_000, maxBytes: -1 },
    },
    log: pino({ level: "silent" }),
    sources: ["varz", "accountz"].map((name) => SOURCES.find((s) => s.name === name)!),
  });
  scraper.setPaused(true);
  try {
    await assert.rejects(scraper.scrapeOnce(), /the sink is gone/);
    // Whatever was left to settle has: a rejection unhandled until now is reported by now.
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(unhandled, [], "no rejection went unhandled");
    assert.deepEqual(markers, [], "no commit marker for a scrape whose parts were refused");
  } finally {
    process.off("unhandledRejection", onUnhandled);
    await scraper[Symbol.asyncDispose]();
    await monitored.close();
  }
});
