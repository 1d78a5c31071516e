/**
 * The warning for parts the scrape stream dropped before the fold is said once per epoch: a
 * marker handed out again (its first handling failed after the fold) finds the epoch folded,
 * and says nothing more of its parts. The node runs in this process so that fault hooks can
 * remove a part of the epoch being handled and fail its first handling; the sink is a real
 * nats-server that the node scrapes, the catalog a real DuckDB file.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { pino } from "pino";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { startNode } from "../../src/node/index.ts";
import { systemAssets, type CommitMarker } from "../../src/protocol/index.ts";
import { selfMonitoringConfig } from "../harness/self-monitoring-config.ts";
import { startTestServer } from "../harness/start-nats-server.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

interface Line {
  readonly msg: string;
  readonly seq?: number;
}

test("parts dropped before the fold are warned of once, not again when the epoch's marker is handed out again", async () => {
  await using dir = await tempDir();
  await using sink = await startTestServer("sink");
  const config = await selfMonitoringConfig({ dir: dir.path, sinkUrl: sink.url, interval: "1s" });
  const nc = await connect({ servers: sink.url });
  const jsm = await jetstreamManager(nc);
  const assets = systemAssets("local");
  const lines: Line[] = [];
  const log = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line) as Line) });
  /** The marker whose part is removed; its first handling fails once the epoch is folded. */
  let marked: number | undefined;
  let failed = false;
  try {
    await using _node = await startNode(config, {
      log,
      faults: {
        beforeReadParts: async () => {
          if (marked !== undefined) return;
          // The marker being handled: the consumer hands out one at a time.
          const seq = (await jsm.consumers.info(assets.scrapeStream, assets.catalogConsumer)).delivered
            .stream_seq;
          const marker = (await jsm.streams.getMessage(assets.scrapeStream, { seq }))!.json<CommitMarker>();
          await jsm.streams.deleteMessage(assets.scrapeStream, marker.parts[0]!.seqs[0]!, false);
          marked = seq;
        },
        afterFold: () => {
          if (failed) return;
          failed = true;
          throw new Error("injected: the epoch's handling fails after its fold");
        },
      },
    });
    await waitFor(
      async () =>
        marked !== undefined &&
        (await jsm.consumers.info(assets.scrapeStream, assets.catalogConsumer)).ack_floor.stream_seq >=
          marked,
      { timeoutMs: 60_000, message: "the marked epoch handled again and acked" },
    );
    const of = (pattern: RegExp) => lines.filter((l) => l.seq === marked && pattern.test(l.msg));
    assert.equal(of(/epoch not completed/).length, 1, "its first handling failed");
    assert.equal(of(/epoch already folded/).length, 1, "it was handed out again, its fold done");
    assert.equal(
      of(/are no longer in the scrape stream/).length,
      1,
      JSON.stringify(of(/./).map((l) => l.msg.slice(0, 80))),
    );
  } finally {
    await nc.close();
  }
});
