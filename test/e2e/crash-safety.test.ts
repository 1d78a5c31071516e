import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { jetstream } from "@nats-io/jetstream";
import { systemAssets, systemSubjects, type CommitMarker } from "../../src/protocol/index.ts";
import { spawnNatsmon } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";
import { sqlQuery } from "../harness/api-client.ts";

const SYSTEM = "local";
/** One scrape at start, none after: each run adds exactly one epoch. */
const ENV = { NATSMON_SINK_EMBEDDED_PORT: "-1", NATSMON_SCRAPER_INTERVAL: "1h" };

async function withClient<T>(url: string, fn: (nc: NatsConnection) => Promise<T>): Promise<T> {
  const nc = await connect({ servers: url });
  try {
    return await fn(nc);
  } finally {
    await nc.close();
  }
}

/** Every commit marker in the scrape stream, in order. */
async function markers(nc: NatsConnection): Promise<{ seq: number; marker: CommitMarker }[]> {
  const consumer = await jetstream(nc).consumers.get(systemAssets(SYSTEM).scrapeStream, {
    filter_subjects: systemSubjects(SYSTEM).scrapeCommit,
  });
  const out: { seq: number; marker: CommitMarker }[] = [];
  for (;;) {
    const m = await consumer.next({ expires: 1000 });
    if (!m) break;
    out.push({ seq: m.seq, marker: m.json<CommitMarker>() });
    if (m.info.pending === 0) break;
  }
  return out;
}

const query = <T>(nc: NatsConnection, sql: string) => sqlQuery<T>(nc, SYSTEM, sql);

/** Runs the node until it kills itself at the fault point. */
async function crashAt(dataDir: string, fault: string): Promise<void> {
  const node = spawnNatsmon(["run", "--data-dir", dataDir], { ...ENV, NATSMON_FAULT: fault });
  assert.equal(await node.exited, "SIGKILL", node.stderr());
}

/** Starts the node normally, waits until `expected` markers exist and all are folded. */
async function recover(dataDir: string, expected: number) {
  const node = spawnNatsmon(["run", "--data-dir", dataDir], ENV);
  try {
    const url = await node.waitForUrl();
    return await withClient(url, async (nc) => {
      const all = await waitFor(
        async () => {
          const ms = await markers(nc);
          const n = (await query<{ n: number }>(nc, "SELECT count(*) AS n FROM hx.epochs"))[0]?.n;
          return ms.length === expected && n === ms.length ? ms : undefined;
        },
        { timeoutMs: 45_000, message: "every committed epoch to be folded" },
      );
      const epochs = await query<{ epoch: string; marker_seq: number; parts: number }>(
        nc,
        "SELECT epoch, marker_seq, parts FROM hx.epochs ORDER BY epoch",
      );
      const perEpoch = await query<{ epoch: string; n: number }>(
        nc,
        "SELECT epoch, count(*) AS n FROM hx.server_stats GROUP BY epoch ORDER BY epoch",
      );
      return { markers: all, epochs, perEpoch };
    });
  } finally {
    await node.kill("SIGTERM");
  }
}

describe("a node killed with SIGKILL around the commit of an epoch", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  before(async () => (dir = await tempDir()));
  after(async () => dir?.[Symbol.asyncDispose]());

  test("after publishing parts but before the commit marker: the partial scrape is never folded", async () => {
    await crashAt(dir.path, "before-commit");
    const seen = await recover(dir.path, 1);
    // Only the recovery run's scrape was committed; the crashed run's parts stay unfolded.
    assert.equal(seen.markers.length, 1);
    assert.deepEqual(
      seen.epochs.map((e) => e.marker_seq),
      seen.markers.map((m) => m.seq),
    );
    assert.ok(seen.markers[0]!.seq > 4, "the crashed run's parts precede the first marker in the stream");
    assert.deepEqual(
      seen.perEpoch.map((e) => e.n),
      [1],
    );
  });

  test("right after the commit marker: the epoch is folded after restart, once", async () => {
    await crashAt(dir.path, "after-commit");
    const seen = await recover(dir.path, 3);
    // Markers: the first recovery's, the crashed run's, this recovery's; each folded once.
    assert.equal(seen.markers.length, 3);
    assert.deepEqual(
      seen.epochs.map((e) => e.marker_seq),
      seen.markers.map((m) => m.seq),
    );
    assert.deepEqual(
      seen.perEpoch.map((e) => e.n),
      [1, 1, 1],
    );
  });

  test("after the fold but before the ack: the redelivered marker is skipped, nothing counts twice", async () => {
    await crashAt(dir.path, "after-fold");
    const seen = await recover(dir.path, 5);
    assert.equal(seen.markers.length, 5);
    assert.deepEqual(
      seen.epochs.map((e) => e.marker_seq),
      seen.markers.map((m) => m.seq),
    );
    assert.deepEqual(
      seen.perEpoch.map((e) => e.n),
      [1, 1, 1, 1, 1],
    );
    // Every epoch kept all its parts: as many as the first one had.
    assert.ok(seen.epochs.every((e) => e.parts === seen.epochs[0]!.parts && e.parts > 0));
  });
});
