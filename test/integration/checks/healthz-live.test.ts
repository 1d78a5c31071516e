/**
 * server-015 against a real 3-node 2.9.10 cluster, scraped with natsmon's own requests and
 * folded at the times they were scraped, the check run over every epoch with the minimum
 * duration lowered to 20 s to keep the tests short:
 * - creating R3 streams with R3 consumers makes HEALTHZ report the new assets not current for
 *   a moment: nothing fires;
 * - a replica whose store directory cannot be read back after a restart stays not current:
 *   it fires once reported over the minimum duration, on that server only, and stops once the
 *   replica is rebuilt.
 * The servers are stopped cleanly: after a kill -9, 2.9.10 can leave idle consumer replicas
 * of the restarted server not current for many minutes, which server-015 rightly reports.
 */
import assert from "node:assert/strict";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { AckPolicy, type JetStreamManager } from "@nats-io/jetstream";
import { server015 } from "../../../src/checks/server/server-015.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { catalogWith, runCheck } from "./check-harness.ts";
import { startLiveCluster, type LiveCluster, type TimedEpoch } from "./live-fixture.ts";

/** The HEALTHZ problem of each server that reported one in `epoch`. */
function problems(epoch: TimedEpoch): Map<string, string> {
  const found = new Map<string, string>();
  for (const r of epoch.replies) {
    const data = (r.body as { data?: { status?: string; error?: string } }).data;
    if (r.source === "healthz" && data?.status !== "ok") found.set(r.server, data?.error ?? "");
  }
  return found;
}

/** The rows of server-015 over `epochs`, as `index server: errors`. */
async function fired(epochs: readonly TimedEpoch[], params: Record<string, number> = {}): Promise<string[]> {
  await using fixture = await catalogWith(epochs);
  const rows = await runCheck(fixture.catalog, server015, fixture.epochs.at(-1)!, params, fixture.epochs[0]);
  const index = (epoch: unknown) => fixture.epochs.indexOf(new Date(epoch as Date).toISOString());
  return rows.map((r) => `${index(r.epoch)} ${String(r.server)}: ${(r.errors as string[]).join(", ")}`);
}

const NOT_CURRENT = /^JetStream (stream|consumer) '.*' is not current$/;
const PARAMS = { p_min_seconds: 20 };

describe("server-015 on a real 3-node 2.9.10 cluster", () => {
  let live: LiveCluster;
  let jsm: JetStreamManager;

  const scrape = () => live.scrapeTimed();

  /** Scrapes until every server's HEALTHZ says ok. */
  async function scrapeUntilHealthy(epochs: TimedEpoch[]): Promise<void> {
    await waitFor(
      async () => {
        const epoch = await scrape();
        epochs.push(epoch);
        return epoch.replies.filter((r) => r.source === "healthz").length === 3 && problems(epoch).size === 0;
      },
      { timeoutMs: 60_000, message: "every server healthy" },
    );
  }

  before(async () => {
    live = await startLiveCluster({ sources: ["varz", "healthz"] });
    jsm = await live.jsm();
  });

  after(async () => {
    await live?.close();
  });

  test("creating R3 streams with R3 consumers raises nothing, though HEALTHZ reports them not current for a moment", async () => {
    const epochs: TimedEpoch[] = [];
    let reported = 0;
    // Scraped while each asset is created and just after. HEALTHZ does not catch every new
    // asset catching up: created until it has been seen to.
    const scrapeAround = async (step: () => Promise<unknown>) => {
      const [during] = await Promise.all([scrape(), step()]);
      for (const epoch of [during, await scrape()]) {
        epochs.push(epoch);
        reported += [...problems(epoch).values()].filter((p) => NOT_CURRENT.test(p)).length;
      }
    };
    for (let i = 0; i < 40 && (i < 10 || reported === 0); i++) {
      await scrapeAround(() => jsm.streams.add({ name: `S${i}`, subjects: [`s${i}.>`], num_replicas: 3 }));
      await scrapeAround(() =>
        jsm.consumers.add(`S${i}`, { durable_name: "worker", ack_policy: AckPolicy.Explicit }),
      );
    }
    await scrapeUntilHealthy(epochs);
    assert.ok(reported > 0, "HEALTHZ never reported a new stream or consumer not current");
    assert.deepEqual(await fired(epochs, PARAMS), []);
  });

  test("a replica whose store cannot be recovered fires once reported over the minimum duration, and stops once rebuilt", async () => {
    const leader = (await jsm.streams.info("S0")).cluster?.leader;
    const victim = live.cluster.nodes.find((n) => n.name !== leader)!;
    const streamDir = join(victim.storeDir, "jetstream", "APP", "streams", "S0");
    // The stream's directory replaced by a file: the restarted server cannot create its
    // replica again, and reports it (or its consumer) not current for as long as it runs.
    await victim.stop();
    await rm(streamDir, { recursive: true, force: true });
    await writeFile(streamDir, "not a directory");
    await victim.start();
    await live.cluster.waitForMeta();

    const epochs: TimedEpoch[] = [];
    const firstReport = new Map<string, number>();
    await waitFor(
      async () => {
        const epoch = await scrape();
        epochs.push(epoch);
        const problem = problems(epoch).get(victim.name);
        if (problem === undefined) firstReport.clear();
        if (!problem?.includes("'APP > S0")) return false;
        const since = firstReport.get(problem) ?? Date.parse(epoch.at);
        firstReport.set(problem, since);
        return Date.parse(epoch.at) - since >= PARAMS.p_min_seconds * 1000;
      },
      { timeoutMs: 120_000, message: `${victim.name} reporting S0 over ${PARAMS.p_min_seconds} s` },
    );
    const last = `${epochs.length - 1} `;
    const firing = (await fired(epochs, PARAMS)).filter((row) => row.startsWith(last));
    assert.equal(firing.length, 1, firing.join("; "));
    assert.ok(firing[0]!.startsWith(`${last}${victim.name}: `), firing[0]);
    assert.match(firing[0]!, /JetStream (stream 'APP > S0'|consumer 'APP > S0 > worker') is not current/);

    // Rebuilt: started again with the directory gone, the server copies the replica from its peers.
    await victim.stop();
    await rm(streamDir, { force: true });
    await victim.start();
    await live.cluster.waitForMeta();
    await scrapeUntilHealthy(epochs);
    assert.deepEqual(
      (await fired(epochs, PARAMS)).filter((row) => row.startsWith(`${epochs.length - 1} `)),
      [],
    );
  });
});
