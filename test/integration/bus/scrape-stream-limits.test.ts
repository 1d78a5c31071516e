/**
 * The scrape stream's limits (scraper.stream) applied to a real nats-server: created with
 * them, updated in place when they change, and kept as they are by a node without the scrape
 * side, so two nodes of one system with different settings do not undo each other.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { ensureStream, scrapeStreamConfig } from "../../../src/bus/index.ts";
import { startTestServer } from "../../harness/start-nats-server.ts";

const MINUTE_NS = 60e9;

test("the scrape stream takes its configured limits, a change updates it, and keepLimits leaves an existing stream's", async () => {
  await using server = await startTestServer("limits");
  const nc = await connect({ servers: server.url });
  try {
    const jsm = await jetstreamManager(nc);
    const info = async () => (await jsm.streams.info("MON_SCRAPE_lim")).config;

    // The least max age config allows is a minute, below the asset's 2-minute duplicate window,
    // which nats-server would refuse as longer than the max age: the window is cut to it.
    await ensureStream(jsm, await scrapeStreamConfig("lim", 1, { maxAgeMs: 60_000, maxBytes: 1_000_000 }));
    let config = await info();
    assert.deepEqual(
      [config.max_age, config.max_bytes, config.duplicate_window],
      [MINUTE_NS, 1_000_000, MINUTE_NS],
    );

    await ensureStream(jsm, await scrapeStreamConfig("lim", 1, { maxAgeMs: 3_600_000, maxBytes: -1 }));
    config = await info();
    assert.deepEqual(
      [config.max_age, config.max_bytes, config.duplicate_window],
      [60 * MINUTE_NS, -1, 2 * MINUTE_NS],
    );

    await ensureStream(jsm, await scrapeStreamConfig("lim", 1, { maxAgeMs: 600_000, maxBytes: 5_000_000 }), {
      keepLimits: true,
    });
    config = await info();
    assert.deepEqual(
      [config.max_age, config.max_bytes, config.duplicate_window],
      [60 * MINUTE_NS, -1, 2 * MINUTE_NS],
    );
    assert.equal(config.discard, "old");
  } finally {
    await nc.close();
  }
});
