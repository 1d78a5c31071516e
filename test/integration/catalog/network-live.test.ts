import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { gunzipSync } from "node:zlib";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { foldEpoch, type ScrapeReply } from "../../../src/catalog/index.ts";
import { parseJsonExact } from "../../../src/lib/index.ts";
import { gather, SOURCES } from "../../../src/scrape/index.ts";
import { SYS_USER } from "../../harness/start-nats-server.ts";
import {
  startTestSupercluster,
  SUPERCLUSTER_SERVERS,
  type TestSupercluster,
} from "../../harness/start-nats-supercluster.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { marker, q, tempCatalog } from "./lab-epoch.ts";

const WINDOW = { quietMs: 300, timeoutMs: 5000 };
const SCRAPED = ["varz", "healthz", "routez", "gatewayz", "leafz"];
const E1 = "2026-11-22T12:00:00.000Z";
const E2 = "2026-11-22T12:01:00.000Z";

/** One epoch's replies, gathered with the scraper's own requests and decoded as the catalog side does. */
async function scrape(nc: NatsConnection): Promise<ScrapeReply[]> {
  const replies: ScrapeReply[] = [];
  for (const source of SOURCES.filter((s) => SCRAPED.includes(s.name))) {
    const result = await gather(nc, source.subject, source.body, WINDOW);
    if (result.kind !== "replies") continue;
    for (const r of result.replies) {
      const text = (r.encoding === "gzip" ? gunzipSync(r.data) : Buffer.from(r.data)).toString("utf8");
      replies.push({ source: source.name, server: r.server, body: parseJsonExact(text) });
    }
  }
  return replies;
}

function link(server: string, gateway: string, direction: string, remote: unknown, configured: boolean) {
  return { server, gateway, direction, remote_server: remote, connected: true, configured };
}

function epochInput(epoch: string, markerSeq: number, replies: ScrapeReply[]) {
  return {
    markerSeq,
    marker: marker(epoch, replies, { servers_expected: [...SUPERCLUSTER_SERVERS] }),
    replies,
  };
}

describe("routes, gateways and leafnodes of real 2.9.10 servers land in the catalog", () => {
  let cluster: TestSupercluster;
  let sys: NatsConnection;
  before(async () => {
    cluster = await startTestSupercluster();
    sys = await connect({ servers: cluster.urls.n1, user: SYS_USER.user, pass: SYS_USER.password });
  });
  after(async () => {
    await sys?.close();
    await cluster?.[Symbol.asyncDispose]();
  });

  test("one scraped epoch shows every link, remotes named; a stopped gateway peer becomes expected-but-missing", async () => {
    await using t = await tempCatalog();
    await foldEpoch(t.catalog, epochInput(E1, 1, await scrape(sys)));
    assert.deepEqual((await q(t.catalog, "SELECT errors FROM hx.epochs"))[0]?.errors, []);

    // 2.9.10 routes carry only the remote's id; the fold names it from the epoch's replies.
    assert.deepEqual(
      await q(t.catalog, "SELECT server, cluster, remote, pool_index FROM hx.routes ORDER BY ALL"),
      [
        { server: "n1", cluster: "east", remote: "n2", pool_index: 0 },
        { server: "n2", cluster: "east", remote: "n1", pool_index: 0 },
      ],
    );
    const [route] = await q(
      t.catalog,
      "SELECT rtt_ns, uptime_ns, in_msgs FROM hx.routes WHERE server = 'n1'",
    );
    assert.ok(typeof route?.rtt_ns === "number" && route.rtt_ns > 0, `rtt_ns ${String(route?.rtt_ns)}`);
    assert.ok(typeof route.in_msgs === "number" && route.in_msgs > 0);

    // Each server connects out once per remote gateway, to any one of its servers: every
    // east server to w1, and w1 to either n1 or n2, which alone then has an inbound link.
    const gateways = await q(
      t.catalog,
      "SELECT server, gateway, direction, remote_server, connected, configured FROM hx.gateways ORDER BY ALL",
    );
    const westIn = gateways.find((g) => g.server === "w1" && g.direction === "outbound")?.remote_server;
    assert.ok(westIn === "n1" || westIn === "n2", `w1 connects out to ${String(westIn)}`);
    assert.deepEqual(gateways, [
      ...["n1", "n2"].flatMap((server) => [
        ...(server === westIn ? [link(server, "west", "inbound", "w1", false)] : []),
        link(server, "west", "outbound", "w1", true),
      ]),
      link("w1", "east", "inbound", "n1", false),
      link("w1", "east", "inbound", "n2", false),
      // west lists no gateway: it learned of east from east's connections.
      link("w1", "east", "outbound", westIn, false),
    ]);

    assert.deepEqual(await q(t.catalog, "SELECT server, account, remote FROM hx.leafnodes ORDER BY ALL"), [
      { server: "l1", account: "APP", remote: "127.0.0.1" },
      { server: "l1", account: "SYS", remote: "127.0.0.1" },
      { server: "n1", account: "APP", remote: "127.0.0.1" },
      { server: "n1", account: "SYS", remote: "127.0.0.1" },
    ]);
    assert.deepEqual(await q(t.catalog, "SELECT * FROM hx.gateway_expected"), []);

    await cluster.stop("w1");
    await waitFor(
      async () => {
        const result = await gather(sys, "$SYS.REQ.SERVER.PING.GATEWAYZ", {}, WINDOW);
        return (
          result.kind === "replies" &&
          result.replies.every((r) => !JSON.stringify(r.envelope).includes('"outbound_gateways":{"west"'))
        );
      },
      { message: "east to forget west" },
    );
    await foldEpoch(t.catalog, epochInput(E2, 2, await scrape(sys)));
    assert.deepEqual(
      await q(t.catalog, "SELECT epoch, server, gateway FROM hx.gateway_expected ORDER BY ALL"),
      [
        { epoch: E2, server: "n1", gateway: "west" },
        { epoch: E2, server: "n2", gateway: "west" },
      ],
    );
  });
});
