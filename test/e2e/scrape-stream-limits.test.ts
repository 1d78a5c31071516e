/**
 * The scrape stream's limits from configuration (scraper.stream.max-age and max-bytes), on
 * `natsmon run` with the embedded default: on the stream after start, updated in place when
 * the setting changes across a restart, and, set tiny, a real scrape whose parts the stream
 * drops before the fold is reported naming those limits and the setting to raise.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { jetstreamManager, type StreamConfig } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { sqlQuery } from "../harness/api-client.ts";
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

  test("set below one epoch, drop parts of a real scrape before the fold, and the catalog says so naming max-bytes", async () => {
    await using dir = await tempDir();
    // An epoch of the embedded default is about 21 KB; 10 KB keeps its commit marker (the
    // last message, under 2 KB) and its last parts, and drops the first ones.
    const { node, nc } = await spawnLocalNode(dir.path, [], { NATSMON_SCRAPER_STREAM_MAX_BYTES: "10KB" });
    try {
      const line = await waitFor(
        () =>
          node
            .stderr()
            .split("\n")
            .find((l) => l.includes("are no longer in the scrape stream")),
        { timeoutMs: 60_000, message: "the catalog to report parts dropped" },
      );
      const { msg, level } = JSON.parse(line) as { msg: string; level: number | string };
      assert.match(String(level), /40|warn/);
      assert.match(msg, /no longer in the scrape stream MON_SCRAPE_local \(from [^)]+\): it dropped them/);
      assert.match(
        msg,
        /max_bytes 9\.8KiB \(scraper\.stream\.max-bytes\) and max_age 6h \(scraper\.stream\.max-age\)/,
      );
      assert.match(
        msg,
        /its max bytes dropped them to make room for newer scrapes: raise scraper\.stream\.max-bytes/,
      );
      const epochs = await waitFor(
        async () => {
          const rows = await sqlQuery<{ errors: string[]; servers_partial: string[] }>(
            nc,
            "local",
            "SELECT errors, servers_partial FROM hx.epochs WHERE len(servers_partial) > 0",
          );
          return rows.length > 0 && rows;
        },
        { message: "an epoch folded with its dropped parts' server partial" },
      );
      assert.ok(
        epochs[0]!.errors.some((e) =>
          /no longer in the stream: dropped by the scrape stream before the fold/.test(e),
        ),
        JSON.stringify(epochs[0]),
      );
    } finally {
      await nc.close();
      await node.kill("SIGTERM");
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
