/**
 * The scrape stream's limits from configuration (scraper.stream.max-age and max-bytes), on
 * `natsmon run` with the embedded default: on the stream after start, updated in place when
 * the setting changes across a restart, and a max-bytes the sink cannot reserve refused at
 * start-up by its setting.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { jetstreamManager, type StreamConfig } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { spawnLocalNode } from "../harness/local-node.ts";
import { runNatsmon } from "../harness/natsmon-process.ts";
import { SYS_USER, launch } from "../harness/start-nats-server.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

const STREAM = "MON_SCRAPE_local";
const HOUR_NS = 3_600 * 1e9;

async function streamConfig(nc: NatsConnection): Promise<StreamConfig> {
  const jsm = await jetstreamManager(nc);
  return waitFor(
    () =>
      jsm.streams.info(STREAM).then(
        (info) => info.config,
        () => undefined,
      ),
    {
      message: "the scrape stream to exist",
    },
  );
}

describe("the scrape stream's limits", () => {
  test("are on the stream after start, and a changed setting updates the existing stream at the next start", async () => {
    await using dir = await tempDir();
    {
      const { node, nc } = await spawnLocalNode(dir.path, [], {
        NATSMON_SCRAPER_STREAM_MAX_AGE: "2h",
        NATSMON_SCRAPER_STREAM_MAX_BYTES: "64MiB",
      });
      try {
        const config = await streamConfig(nc);
        assert.equal(config.max_age, 2 * HOUR_NS);
        assert.equal(config.max_bytes, 64 * 1024 ** 2);
        assert.equal(config.discard, "old");
      } finally {
        await nc.close();
        await node.kill("SIGTERM");
      }
    }
    {
      const { node, nc } = await spawnLocalNode(dir.path, [], {
        NATSMON_SCRAPER_STREAM_MAX_AGE: "30m",
        NATSMON_SCRAPER_STREAM_MAX_BYTES: "none",
      });
      try {
        const config = await streamConfig(nc);
        assert.equal(config.max_age, 0.5 * HOUR_NS);
        assert.equal(config.max_bytes, -1);
        assert.equal(config.discard, "old");
      } finally {
        await nc.close();
        await node.kill("SIGTERM");
      }
    }
  });

  test("a max-bytes the sink's JetStream storage cannot reserve stops start-up naming the setting", async () => {
    await using dir = await tempDir();
    await using sink = await launch({
      name: "small",
      workDir: dir.path,
      port: -1,
      jetstreamMax: { fileBytes: 20_000_000 },
    });
    const file = join(dir.path, "natsmon.yaml");
    await writeFile(
      file,
      [
        `node: {data-dir: ${JSON.stringify(join(dir.path, "data"))}}`,
        `sink: {url: ${JSON.stringify(sink.clientUrl)}}`,
        `system: {id: x, nats: {url: ${JSON.stringify(sink.clientUrl)}, user: ${SYS_USER.user}, password: ${SYS_USER.password}}}`,
        "scraper: {stream: {max-bytes: 1GB}}",
      ].join("\n"),
    );
    const r = await runNatsmon(["run", "--config", file]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /natsmon: the scrape stream of system x was refused its max_bytes of 1000000000 bytes \(scraper\.stream\.max-bytes\) times 1 replicas: .*lower scraper\.stream\.max-bytes/,
    );
  });
});
