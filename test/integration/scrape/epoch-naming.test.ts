/**
 * Epoch names move forward whatever the scrape host's wall clock does: the real scraper,
 * scraping a real nats-server, with its wall and monotonic clocks injected. A clock stepped
 * back (an NTP step correction), or a last committed epoch ahead of this host's clock (named
 * on another host), names epochs 1 ms after the last one, with a warning naming the step; an
 * epoch more than 5 minutes ahead is not followed.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { connect } from "@nats-io/transport-node";
import { pino } from "pino";
import type { CommitMarker, RawReply, ScrapePartRef } from "../../../src/protocol/index.ts";
import { SOURCES, startScraper } from "../../../src/scrape/index.ts";
import { startTestServer, SYS_USER } from "../../harness/start-nats-server.ts";

interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly step_ms?: number;
  readonly behind_ms?: number;
  readonly last_epoch?: string;
}

const T0 = Date.parse("2026-11-22T10:00:00.000Z");
const WARN = 40;
const ERROR = 50;

/** A scraper of varz alone, paused (it scrapes when told), on clocks the test moves. */
async function clockedScraper(lastEpoch?: string) {
  const server = await startTestServer("clock");
  const monitored = await connect({ servers: server.url, user: SYS_USER.user, pass: SYS_USER.password });
  const clock = { wallMs: T0, monoMs: 0 };
  const markers: CommitMarker[] = [];
  const logs: LogLine[] = [];
  const sink = {
    publishReply: (_epoch: string, reply: RawReply): Promise<ScrapePartRef> =>
      Promise.resolve({
        source: reply.source,
        server: reply.server,
        seqs: [1],
        bytes: reply.data.byteLength,
      }),
    publishCommit: (marker: CommitMarker): Promise<number> => Promise.resolve(markers.push(marker)),
  };
  const scraper = startScraper({
    systemId: "clock",
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
    log: pino({ level: "info" }, { write: (line: string) => logs.push(JSON.parse(line) as LogLine) }),
    sources: SOURCES.filter((s) => s.name === "varz"),
    now: () => new Date(clock.wallMs),
    monotonicMs: () => clock.monoMs,
    ...(lastEpoch ? { lastEpoch } : {}),
  });
  // No scrape at start: each is asked for, at a time the test set.
  scraper.setPaused(true);
  return {
    clock,
    markers,
    logs,
    /** Moves both clocks by `ms` (time passing), then scrapes; returns the epoch's name. */
    async scrapeAfter(ms: number): Promise<string> {
      clock.wallMs += ms;
      clock.monoMs += ms;
      return (await scraper.scrapeOnce()).epoch;
    },
    async [Symbol.asyncDispose]() {
      await scraper[Symbol.asyncDispose]();
      await monitored.close();
      await server[Symbol.asyncDispose]();
    },
  };
}

const at = (ms: number) => new Date(T0 + ms).toISOString();

test("a wall clock stepped back names epochs 1 ms after the last one, warns once naming the step, and is followed again once it passes", async () => {
  await using s = await clockedScraper();
  assert.equal(await s.scrapeAfter(0), at(0));
  assert.equal(await s.scrapeAfter(10_000), at(10_000));
  // An NTP step correction: the wall clock goes back 31 s while 1 s passes.
  s.clock.wallMs -= 31_000;
  assert.equal(await s.scrapeAfter(1_000), at(10_001));
  assert.equal(await s.scrapeAfter(1_000), at(10_002));
  const warned = s.logs.filter((l) => l.level >= WARN);
  assert.equal(warned.length, 1, JSON.stringify(s.logs));
  assert.equal(warned[0]!.step_ms, -31_000);
  assert.equal(warned[0]!.behind_ms, 30_000);
  assert.match(warned[0]!.msg, /stepped 31\.0 s back/);
  assert.match(warned[0]!.msg, /NTP/);
  // The clock (19 s before T0 now) passes the last epoch: it names the epochs again.
  assert.equal(await s.scrapeAfter(30_000), at(11_000));
  assert.ok(s.logs.some((l) => /epochs are named by it again/.test(l.msg)));
  assert.deepEqual(
    s.markers.map((m) => m.epoch),
    [at(0), at(10_000), at(10_001), at(10_002), at(11_000)],
  );
});

test("a wall clock stepped forward is followed, with a warning naming the step", async () => {
  await using s = await clockedScraper();
  await s.scrapeAfter(0);
  s.clock.wallMs += 3_600_000;
  assert.equal(await s.scrapeAfter(1_000), at(3_601_000));
  const warned = s.logs.filter((l) => l.level >= WARN);
  assert.equal(warned.length, 1, JSON.stringify(s.logs));
  assert.equal(warned[0]!.step_ms, 3_600_000);
  assert.match(warned[0]!.msg, /stepped 3600 s forward/);
});

test("a scraper starting behind the last committed epoch names its epochs after it", async () => {
  // The last epoch was named by another scrape host, two minutes ahead of this one.
  await using s = await clockedScraper(at(120_000));
  assert.equal(await s.scrapeAfter(0), at(120_001));
  assert.equal(await s.scrapeAfter(1_000), at(120_002));
  const warned = s.logs.filter((l) => l.level >= WARN);
  assert.equal(warned.length, 1, JSON.stringify(s.logs));
  assert.equal(warned[0]!.behind_ms, 120_000);
  assert.equal(warned[0]!.last_epoch, at(120_000));
});

test("a last committed epoch more than 5 minutes ahead is not followed, and is logged as an error", async () => {
  // Named by a clock an hour ahead: following it would name every epoch wrong for an hour.
  await using s = await clockedScraper(at(3_600_000));
  assert.equal(await s.scrapeAfter(0), at(0));
  const errors = s.logs.filter((l) => l.level >= ERROR);
  assert.equal(errors.length, 1, JSON.stringify(s.logs));
  assert.equal(errors[0]!.last_epoch, at(3_600_000));
  assert.match(errors[0]!.msg, /ahead of this host's clock/);
});
