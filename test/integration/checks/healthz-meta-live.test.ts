/**
 * server-014 against a real 3-node 2.9.10 cluster holding R3 streams with consumers, scraped
 * with natsmon's own requests and folded at the times they were scraped, the check run over
 * every epoch with the minimum duration lowered to 20 s to keep the tests short:
 * - restarting one server, gracefully or with kill -9, the meta leader or not, makes HEALTHZ
 *   report no meta leader, or not current with it, for a moment: nothing fires;
 * - with two of the three servers stopped the meta group has lost its quorum, and the survivor
 *   keeps reporting no meta leader: it fires once reported over the minimum duration, on that
 *   server only, and stops once the others are back.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { AckPolicy, jetstreamManager } from "@nats-io/jetstream";
import type { ScrapeReply } from "../../../src/catalog/index.ts";
import { server014 } from "../../../src/checks/server/server-014.ts";
import { SOURCES } from "../../../src/scrape/index.ts";
import { startTestCluster, type ClusterNode, type TestCluster } from "../../harness/start-nats-cluster.ts";
import { APP_USER, SYS_USER } from "../../harness/start-nats-server.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { scrapeOneEpoch } from "../catalog/live-scrape.ts";
import { catalogWith, runCheck } from "./check-harness.ts";

const SCRAPED = SOURCES.filter((s) => ["varz", "healthz"].includes(s.name));
const SERVERS = ["n1", "n2", "n3"];
const PARAMS = { p_min_seconds: 20 };

/** One scraped epoch, at the time natsmon's scraper gave it. */
interface LiveEpoch {
  readonly replies: readonly ScrapeReply[];
  readonly at: string;
  readonly marker: { servers_expected: string[] };
}

/** What each server that answered HEALTHZ in `epoch` said: its error, or "ok". */
function answers(epoch: LiveEpoch): Map<string, string> {
  const found = new Map<string, string>();
  for (const r of epoch.replies) {
    const data = (r.body as { data?: { status?: string; error?: string } }).data;
    if (r.source === "healthz") found.set(r.server, data?.status === "ok" ? "ok" : (data?.error ?? ""));
  }
  return found;
}

/** 2.9.10's wording of a problem with the meta layer, server-014's kind. */
const META =
  /^JetStream (has not established contact with a meta leader|is not current with the meta leader)$/;
/** An answer that got past the meta layer: ok, or a stream or consumer problem. */
const PAST_META = /^(ok|JetStream (stream|consumer) '.*' is not current)$/;

/** The rows of server-014 over `epochs`, as `index server: errors`. */
async function fired(epochs: readonly LiveEpoch[]): Promise<string[]> {
  await using fixture = await catalogWith(epochs);
  const rows = await runCheck(fixture.catalog, server014, fixture.epochs.at(-1)!, PARAMS, fixture.epochs[0]);
  const index = (epoch: unknown) => fixture.epochs.indexOf(new Date(epoch as Date).toISOString());
  return rows.map((r) => `${index(r.epoch)} ${String(r.server)}: ${(r.errors as string[]).join(", ")}`);
}

describe("server-014 on a real 3-node 2.9.10 cluster", () => {
  let cluster: TestCluster;
  let sys: NatsConnection;
  let app: NatsConnection;

  async function scrape(): Promise<LiveEpoch> {
    const { replies, marker } = await scrapeOneEpoch(sys, SCRAPED);
    return { replies, at: new Date(marker.epoch).toISOString(), marker: { servers_expected: SERVERS } };
  }

  /**
   * Scrapes until every server answers past the meta layer. Not until every one says ok: after
   * a kill -9, 2.9.10 can leave consumer replicas not current for minutes (server-015's case).
   */
  async function scrapeUntilMetaHealthy(epochs: LiveEpoch[]): Promise<void> {
    await waitFor(
      async () => {
        const epoch = await scrape();
        epochs.push(epoch);
        const said = answers(epoch);
        return SERVERS.every((s) => PAST_META.test(said.get(s) ?? ""));
      },
      { timeoutMs: 60_000, message: "every server's meta layer healthy" },
    );
  }

  async function metaLeader(): Promise<ClusterNode> {
    await cluster.waitForMeta();
    const reply = await sys.request("$SYS.REQ.SERVER.PING.JSZ", "{}", { timeout: 2000 });
    const leader = reply.json<{ data?: { meta_cluster?: { leader?: string } } }>().data?.meta_cluster?.leader;
    return cluster.nodes.find((n) => n.name === leader)!;
  }

  before(async () => {
    cluster = await startTestCluster({ size: 3 });
    sys = await connect({ servers: cluster.urls.split(","), user: SYS_USER.user, pass: SYS_USER.password });
    app = await connect({ servers: cluster.urls.split(","), user: APP_USER.user, pass: APP_USER.password });
    const jsm = await jetstreamManager(app, { timeout: 30_000 });
    for (let i = 0; i < 5; i++) {
      await jsm.streams.add({ name: `S${i}`, subjects: [`s${i}.>`], num_replicas: 3 });
      await jsm.consumers.add(`S${i}`, { durable_name: "worker", ack_policy: AckPolicy.Explicit });
    }
  });

  after(async () => {
    await app?.close();
    await sys?.close();
    await cluster?.[Symbol.asyncDispose]();
  });

  test("restarting one server, gracefully or with kill -9, the meta leader or not, raises nothing, though HEALTHZ reports the meta layer for a moment", async () => {
    const epochs: LiveEpoch[] = [];
    // How long the longest-reporting server has reported the meta layer, from its first report
    // to its latest, over every restart (-1 before any report), and how many reports.
    const reports = () =>
      SERVERS.map((s) =>
        epochs.filter((e) => META.test(answers(e).get(s) ?? "")).map((e) => Date.parse(e.at)),
      );
    const reportedOver = () => Math.max(...reports().map((t) => (t.length > 0 ? t.at(-1)! - t[0]! : -1)));
    const pick = async (leader: boolean): Promise<ClusterNode> => {
      const l = await metaLeader();
      return leader ? l : cluster.nodes.find((n) => n !== l)!;
    };
    // Scraped while the server is down and until every server is past the meta layer again.
    // HEALTHZ does not catch every restart's moment: restarted until one server's reports span
    // more than the minimum duration, which would fire if the restarts in between were not
    // seen to recover.
    for (let round = 0; round < 8 && reportedOver() <= PARAMS.p_min_seconds * 1000; round++) {
      for (const [leader, how] of [
        [true, "kill"],
        [true, "stop"],
        [false, "kill"],
        [false, "stop"],
      ] as const) {
        const victim = await pick(leader);
        await (how === "kill" ? victim.kill() : victim.stop());
        epochs.push(await scrape());
        await victim.start();
        await scrapeUntilMetaHealthy(epochs);
      }
    }
    assert.ok(
      reportedOver() > PARAMS.p_min_seconds * 1000,
      `HEALTHZ reported the meta layer ${reports().flat().length} times, by no server over ${PARAMS.p_min_seconds} s`,
    );
    assert.deepEqual(await fired(epochs), []);
  });

  test("a meta group that lost its quorum fires on the survivor once reported over the minimum duration, and stops once the others are back", async () => {
    const survivor = await metaLeader();
    const others = cluster.nodes.filter((n) => n !== survivor);
    await Promise.all(others.map(async (n) => n.stop()));

    // The survivor first keeps the leadership (and reports its streams behind); it steps down
    // once it finds it has lost the quorum, then reports no meta leader for as long as it lasts.
    const epochs: LiveEpoch[] = [];
    let since: number | undefined;
    await waitFor(
      async () => {
        const epoch = await scrape();
        epochs.push(epoch);
        const said = answers(epoch).get(survivor.name) ?? "";
        if (PAST_META.test(said)) since = undefined;
        if (!META.test(said)) return false;
        since ??= Date.parse(epoch.at);
        return Date.parse(epoch.at) - since >= PARAMS.p_min_seconds * 1000;
      },
      {
        timeoutMs: 120_000,
        message: `${survivor.name} reporting no meta leader over ${PARAMS.p_min_seconds} s`,
      },
    );
    const last = `${epochs.length - 1} `;
    const firing = (await fired(epochs)).filter((row) => row.startsWith(last));
    assert.equal(firing.length, 1, firing.join("; "));
    assert.ok(firing[0]!.startsWith(`${last}${survivor.name}: `), firing[0]);
    assert.match(firing[0]!.slice(`${last}${survivor.name}: `.length), META);

    await Promise.all(others.map(async (n) => n.start()));
    await cluster.waitForMeta();
    await scrapeUntilMetaHealthy(epochs);
    assert.deepEqual(
      (await fired(epochs)).filter((row) => row.startsWith(`${epochs.length - 1} `)),
      [],
    );
  });
});
