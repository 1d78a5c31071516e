/**
 * opt-place-001 and -002 on real nats-server 2.9.10 processes, from what the fold stores of
 * real scrapes: cluster east (n1, n2, JetStream) joined by a gateway to cluster west (w1,
 * without JetStream), the APP account's stream ORDERS and its consumers led in east. Six
 * APP clients on w1 are the account's clients in a cluster without its streams: opt-place-001
 * fires for APP in west, and, west holding most of APP's clients, opt-place-002 for each
 * consumer; the clients closed, neither fires.
 *
 * The shared supercluster harness runs without JetStream, so this file starts its own: west
 * first, then east with the cluster harness and a gateway to west.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { AckPolicy, jetstreamManager } from "@nats-io/jetstream";
import type { NatsServerProcess } from "../../../src/bus/index.ts";
import type { Check } from "../../../src/checks/index.ts";
import { OPT_PLACE_CHECKS } from "../../../src/checks/opt-place/index.ts";
import { SOURCES, gather } from "../../../src/scrape/index.ts";
import { startTestCluster, type TestCluster } from "../../harness/start-nats-cluster.ts";
import { APP_USER, SYS_USER, launch } from "../../harness/start-nats-server.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { scrapeOneEpoch } from "../catalog/live-scrape.ts";
import { catalogWith, runCheck } from "./check-harness.ts";

const SERVERS = ["n1", "n2", "w1"];
const SCRAPED = SOURCES.filter((s) => ["varz", "jsz", "accstatz"].includes(s.name));
const check = (code: string): Check => OPT_PLACE_CHECKS.find((c) => c.code === code)!;
const CONSUMERS = ["c1", "c2", "c3"];

function gatewayBlock(name: string, westUrl?: string): string {
  const remotes = westUrl ? `{ name: "west", urls: [${JSON.stringify(westUrl)}] }` : "";
  return `gateway {\n  name: ${JSON.stringify(name)}\n  listen: "127.0.0.1:-1"\n  gateways: [${remotes}]\n}\n`;
}

type Data = Record<string, unknown>;

/** Each server's `data` of a `$SYS.REQ.SERVER.PING.<kind>` request. */
async function pingData(nc: NatsConnection, kind: string): Promise<Map<string, Data>> {
  const result = await gather(nc, `$SYS.REQ.SERVER.PING.${kind}`, {}, { quietMs: 300, timeoutMs: 5000 });
  const data = new Map<string, Data>();
  if (result.kind === "replies") {
    for (const r of result.replies) data.set(r.server, (r.envelope as { data?: Data }).data ?? {});
  }
  return data;
}

describe("opt-place checks on real 2.9.10 clusters east (JetStream) and west joined by a gateway", () => {
  let root: string;
  let w1: NatsServerProcess | undefined;
  let east: TestCluster | undefined;
  let sys: NatsConnection;
  let app: NatsConnection;
  let westUrl: string;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), "natsmon-opt-place-"));
    w1 = await launch({
      name: "w1",
      workDir: join(root, "w1"),
      port: -1,
      jetstream: false,
      cluster: { name: "west", port: -1, routes: [] },
      extraConfig: gatewayBlock("west"),
    });
    westUrl = w1.clientUrl;
    const probe = await connect({ servers: w1.clientUrl, user: SYS_USER.user, pass: SYS_USER.password });
    const gatewayPort = ((await pingData(probe, "VARZ")).get("w1")!.gateway as { port: number }).port;
    await probe.close();
    const toWest = `nats://127.0.0.1:${gatewayPort}`;

    // The cluster harness retries when another process takes a probed port meanwhile, and
    // stops the nodes that started when one did not.
    east = await startTestCluster({ size: 2, name: "east", extraConfig: gatewayBlock("east", toWest) });
    const n1Url = east.nodes[0]!.url;
    sys = await connect({ servers: n1Url, user: SYS_USER.user, pass: SYS_USER.password });
    await waitFor(
      async () => {
        const [jsz, gatewayz] = await Promise.all([pingData(sys, "JSZ"), pingData(sys, "GATEWAYZ")]);
        const meta = (jsz.get("n1")?.meta_cluster ?? {}) as { leader?: string; cluster_size?: number };
        const linked = SERVERS.every(
          (s) => Object.keys(gatewayz.get(s)?.outbound_gateways ?? {}).length === 1,
        );
        return meta.leader !== undefined && meta.cluster_size === 2 && linked;
      },
      { timeoutMs: 30_000, message: "east's meta group and the gateways" },
    );
    app = await connect({ servers: n1Url, user: APP_USER.user, pass: APP_USER.password });
    // Set-up: replicated assets on a fresh cluster can outlast the API's 5 s while other files load the CPUs.
    const jsm = await jetstreamManager(app, { timeout: 30_000 });
    await jsm.streams.add({ name: "ORDERS", subjects: ["orders.>"], num_replicas: 2 });
    for (const name of CONSUMERS) {
      await jsm.consumers.add("ORDERS", { durable_name: name, ack_policy: AckPolicy.Explicit });
    }
  });

  after(async () => {
    await app?.close();
    await sys?.close();
    await east?.[Symbol.asyncDispose]();
    await w1?.stop();
    if (root) await rm(root, { recursive: true, force: true });
  });

  /** Two epochs scraped now, folded, and the checks run over them as one window. */
  async function findingsNow(codes: readonly string[]): Promise<Record<string, Record<string, unknown>[]>> {
    const epochs = [];
    for (let i = 0; i < 2; i++) {
      const { replies } = await scrapeOneEpoch(sys, SCRAPED);
      epochs.push({ replies, marker: { servers_expected: SERVERS } });
    }
    await using fixture = await catalogWith(epochs);
    const result: Record<string, Record<string, unknown>[]> = {};
    for (const code of codes) {
      result[code] = await runCheck(
        fixture.catalog,
        check(code),
        fixture.epochs.at(-1)!,
        {},
        fixture.epochs[0],
      );
    }
    return result;
  }

  test("with the APP clients in east, where ORDERS and its consumers are led, neither check fires", async () => {
    assert.deepEqual(await findingsNow(["opt-place-001", "opt-place-002"]), {
      "opt-place-001": [],
      "opt-place-002": [],
    });
  });

  test("six APP clients on w1: 001 fires for APP in west and 002 for each consumer; closed, neither does", async () => {
    const clients: NatsConnection[] = [];
    try {
      for (let i = 0; i < 6; i++) {
        clients.push(await connect({ servers: westUrl, user: APP_USER.user, pass: APP_USER.password }));
      }
      const away = await findingsNow(["opt-place-001", "opt-place-002"]);
      assert.deepEqual(
        away["opt-place-001"]!.map((r) => [
          r.entity_name,
          r.entity_key,
          r.connections,
          r.account_connections,
        ]),
        [["APP", "west", 6n, 7n]],
      );
      assert.deepEqual(away["opt-place-001"]![0]!.stream_clusters, ["east"]);
      assert.deepEqual(
        away["opt-place-002"]!.map((r) => [r.entity_name, r.leader_cluster, r.client_cluster]).sort(),
        CONSUMERS.map((c) => [`APP/ORDERS/${c}`, "east", "west"]),
      );
      await Promise.all(clients.splice(0).map(async (c) => c.close()));
      // A server learns of a closed connection a moment after the client is done with it.
      let last: Record<string, Record<string, unknown>[]> = {};
      await waitFor(
        async () => {
          last = await findingsNow(["opt-place-001", "opt-place-002"]);
          return Object.values(last).every((rows) => rows.length === 0);
        },
        { timeoutMs: 20_000, message: "the checks to stop firing" },
      ).catch(() => undefined);
      assert.deepEqual(last, {
        "opt-place-001": [],
        "opt-place-002": [],
      });
    } finally {
      await Promise.all(clients.map(async (c) => c.close()));
    }
  });

  test("natsmon's own service-discovery connection in APP is no client of APP: west's 2 of 4 is not most of them", async () => {
    // As in the supercluster audit: 2 APP clients in east, 2 on w1, and natsmon's discovery
    // connection in APP on w1 too, which made west 3 of 5 (60%, the threshold).
    const clients: NatsConnection[] = [];
    try {
      clients.push(
        await connect({ servers: east!.nodes[0]!.url, user: APP_USER.user, pass: APP_USER.password }),
      );
      for (let i = 0; i < 2; i++) {
        clients.push(await connect({ servers: westUrl, user: APP_USER.user, pass: APP_USER.password }));
      }
      const discovery = await connect({
        servers: westUrl,
        user: APP_USER.user,
        pass: APP_USER.password,
        name: "natsmon live services live/APP",
      });
      clients.push(discovery);
      const accounts = [{ name: "APP", connection: () => Promise.resolve(discovery) }];
      const sources = SOURCES.filter((s) => ["varz", "jsz", "accstatz", "connz"].includes(s.name));
      const epochs = [];
      for (let i = 0; i < 2; i++) {
        const { marker, replies } = await scrapeOneEpoch(sys, sources, { accounts });
        epochs.push({
          replies,
          marker: { servers_expected: SERVERS, own_connections: marker.own_connections },
        });
      }
      await using fixture = await catalogWith(epochs);
      const last = fixture.epochs.at(-1)!;
      const own = await fixture.catalog.withReader(async (con) =>
        (
          await con.runAndReadAll(
            `SELECT o.server, o.account, c.name FROM hx.own_connections o
             LEFT JOIN hx.connections c ON c.epoch = o.epoch AND c.server = o.server AND c.cid = o.cid
             WHERE o.epoch = $1::TIMESTAMPTZ ORDER BY o.server`,
            [last],
          )
        ).getRows(),
      );
      // The scrape connection (sys, no name) is in the system account.
      assert.deepEqual(own, [
        ["n1", "SYS", null],
        ["w1", "APP", "natsmon live services live/APP"],
      ]);
      const rows = await runCheck(fixture.catalog, check("opt-place-002"), last, {}, fixture.epochs[0]);
      assert.deepEqual(rows, []);
      // Counted as a client, natsmon's connection would have tipped it.
      await using counted = await catalogWith(
        epochs.map((e) => ({ ...e, marker: { servers_expected: SERVERS } })),
      );
      const tipped = await runCheck(
        counted.catalog,
        check("opt-place-002"),
        counted.epochs.at(-1)!,
        {},
        counted.epochs[0],
      );
      assert.deepEqual(
        tipped.map((r) => [r.client_cluster, r.client_cluster_pct, r.account_connections]),
        CONSUMERS.map(() => ["west", 60, 5n]),
      );
    } finally {
      await Promise.all(clients.map(async (c) => c.close()));
    }
  });
});
