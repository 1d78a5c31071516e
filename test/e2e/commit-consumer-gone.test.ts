/**
 * The catalog's durable consumer of commit markers deleted under a running node (an
 * operator's `nats consumer rm`, a sink whose store was lost). nats.js keeps pulling from
 * a consumer that no longer exists and says so only on the pull's status; the node used
 * to stand still for ever, folding nothing and logging nothing. Now it says what happened,
 * makes the consumer again, and folds on, every epoch once.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { systemAssets, systemSubjects } from "../../src/protocol/index.ts";
import { spawnNatsmon } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

const assets = systemAssets("local");
const subjects = systemSubjects("local");

test("a deleted commit consumer is made again and the node folds on", async () => {
  await using dir = await tempDir();
  await using node = spawnNatsmon(["run", "--data-dir", dir.path], {
    NATSMON_SINK_EMBEDDED_PORT: "-1",
    NATSMON_SCRAPER_INTERVAL: "1s",
  });
  const nc = await connect({ servers: await node.waitForUrl() });
  try {
    const query = async <T>(sql: string): Promise<T[]> =>
      (await nc.request(subjects.dbQuery, JSON.stringify({ sql }), { timeout: 5000 })).json<T[]>();
    const epochs = async () =>
      (await query<{ n: number }>("SELECT count(*)::INTEGER AS n FROM hx.epochs"))[0]!.n;
    await waitFor(async () => (await epochs()) >= 2, { message: "two epochs folded" });

    const jsm = await jetstreamManager(nc);
    // nats-server 2.9 may answer "unlinkat …: directory not empty" when the delete races the
    // consumer's own state write; the consumer is then gone or is deleted by the next try.
    await waitFor(
      async () => {
        const error = await jsm.consumers.delete(assets.scrapeStream, assets.catalogConsumer).then(
          () => undefined,
          (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
        );
        if (error === undefined) return true;
        if (!/directory not empty/.test(error.message)) throw error;
        return jsm.consumers.info(assets.scrapeStream, assets.catalogConsumer).then(
          () => false,
          () => true,
        );
      },
      { message: "the commit consumer deleted" },
    );
    const deletedAt = await epochs();

    const log = () => node.stdout() + node.stderr();
    await waitFor(() => /consumer of the scrape stream is made again/.test(log()), {
      timeoutMs: 60_000,
      message: "the node to make its consumer again",
    }).catch((err: unknown) => {
      throw new Error(`${String(err)}; its log:\n${log()}`);
    });
    assert.match(log(), /consumer of the scrape stream is missing; making it again/);
    await waitFor(async () => (await epochs()) >= deletedAt + 3, {
      timeoutMs: 60_000,
      message: "epochs folded after the consumer was made again",
    });
    await jsm.consumers.info(assets.scrapeStream, assets.catalogConsumer);

    // Replayed from the stream's start, every marker is folded once: one row per epoch,
    // one per marker in the stream.
    const [dupes] = await query<{ n: number }>(
      "SELECT count(*)::INTEGER AS n FROM (SELECT epoch FROM hx.epochs GROUP BY epoch HAVING count(*) > 1)",
    );
    assert.equal(dupes!.n, 0);
  } finally {
    await nc.close();
  }
});
