/**
 * A catalog node that finds, before it acks an epoch, that its role claim was taken by another
 * node (it stalled past its claim's lapse) stops the side, and hands the marker of that epoch
 * back as a stop mid-epoch does: the node holding the role then gets it at once, not after the
 * consumer's ack wait. A scrape node and a catalog node run in this process on a real
 * nats-server sink (the scrape node writes a backlog first, so the catalog asks about its role
 * right after the fold of the first epoch), the catalog a real DuckDB file.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { pino } from "pino";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import type { Config } from "../../src/config/index.ts";
import { Role } from "../../src/domain/index.ts";
import { startNode } from "../../src/node/index.ts";
import { ROLE_CLAIMS_BUCKET, roleClaimKey, systemAssets } from "../../src/protocol/index.ts";
import { splitNodeConfig } from "../harness/split-node-config.ts";
import { startTestServer } from "../harness/start-nats-server.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

interface Line {
  readonly msg: string;
  readonly seq?: number;
}

function capture(lines: Line[]) {
  return pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line) as Line) });
}

test("a catalog node that lost its role mid-epoch hands the marker back, so the node holding the role gets it at once instead of after the ack wait", async () => {
  await using dir = await tempDir();
  await using sink = await startTestServer("sink");
  const config = (id: string, role: "scrape" | "catalog"): Promise<Config> =>
    splitNodeConfig({ dir: dir.path, sinkUrl: sink.url, id, role, scraper: "{interval: 1s}" });
  // An ack wait of an hour, far past this test's timeout: only a hand-back can bring the
  // marker back to the next catalog node while the test runs.
  const commitAckWaitMs = 3_600_000;
  const nc = await connect({ servers: sink.url });
  const kv = await new Kvm(nc).open(ROLE_CLAIMS_BUCKET);
  const key = roleClaimKey("local", Role.Catalog);
  const scraped: Line[] = [];
  await using _scrape = await startNode(await config("scr", "scrape"), { log: capture(scraped) });
  await waitFor(() => scraped.filter((l) => l.msg === "scrape committed").length >= 3, {
    timeoutMs: 60_000,
    message: "a backlog of three epochs",
  });

  const catalogConfig = await config("cat", "catalog");
  const first: Line[] = [];
  let taken = false;
  const node = await startNode(catalogConfig, {
    log: capture(first),
    commitAckWaitMs,
    faults: {
      // The first epoch: right after the node's claim was refreshed (so the refresh does not
      // find it first), another node's claim replaces it, as when this node stalled past its
      // claim's lapse and the other took the role. With epochs waiting behind it, the node asks
      // about its role as soon as the epoch is folded, before the ack.
      beforeReadParts: async () => {
        if (taken) return;
        taken = true;
        const before = (await kv.get(key))?.revision;
        await waitFor(async () => (await kv.get(key))?.revision !== before, {
          intervalMs: 10,
          message: "the node's next refresh of its claim",
        });
        const other = { node_id: "other", host: "elsewhere", instance: "other1", version: "0", since: "" };
        await kv.put(key, JSON.stringify(other));
      },
    },
  });
  let seq: number | undefined;
  try {
    assert.match(await node.lost, /no longer holds the catalog role of system local: node other/);
    // The side was stopped when its role was found lost; awaiting its stop again waits for it.
    await node.systems[0]?.catalog?.[Symbol.asyncDispose]();
    const found = first.find((l) => /lost the catalog role while folding the epoch/.test(l.msg));
    seq = found?.seq;
    assert.ok(seq, `the side found its role lost before the ack: ${JSON.stringify(first.slice(-20))}`);
    assert.ok(
      first.some((l) => l.seq === seq && /is handed back/.test(l.msg)),
      `the side handed the marker back: ${JSON.stringify(first.slice(-20))}`,
    );
  } finally {
    await node[Symbol.asyncDispose]();
  }
  try {
    const assets = systemAssets("local");
    const jsm = await jetstreamManager(nc);
    const acked = async () =>
      (await jsm.consumers.info(assets.scrapeStream, assets.catalogConsumer)).ack_floor.stream_seq;
    assert.ok((await acked()) < seq, "the marker of the epoch the role was lost in is not acked");
    // The node holding the role now (the other claim's holder runs no process: it is taken over).
    const second: Line[] = [];
    await using _again = await startNode(catalogConfig, { log: capture(second), commitAckWaitMs });
    await waitFor(async () => (await acked()) >= seq, {
      timeoutMs: 120_000,
      message: `the next catalog node acks marker ${seq}`,
    });
    assert.ok(
      second.some((l) => l.seq === seq && /epoch already folded/.test(l.msg)),
      "the next node got the marker again and found its fold done",
    );
  } finally {
    await nc.close();
  }
});
