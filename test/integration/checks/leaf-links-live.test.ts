/**
 * leaf-004 on real nats-server 2.9.10 processes, from what the fold stores of
 * real scrapes: a hub and a leaf whose APP remote goes through a TCP proxy the test cuts
 * (its SYS remote goes straight to the hub, so the leaf goes on answering `$SYS` pings).
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import type { NatsServerProcess } from "../../../src/bus/index.ts";
import { LEAF_CHECKS } from "../../../src/checks/leaf/index.ts";
import { SOURCES } from "../../../src/scrape/index.ts";
import { CuttableProxy } from "../../harness/cuttable-proxy.ts";
import { APP_USER, SYS_USER, launch } from "../../harness/start-nats-server.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { scrapeOneEpoch } from "../catalog/live-scrape.ts";
import { catalogWith, runCheck } from "./check-harness.ts";

const leaf004 = LEAF_CHECKS.find((c) => c.code === "leaf-004")!;
const LEAF_APP = "leaf -> remote (APP)";
const SERVERS = ["hub", "leaf"];

/** A hub and a leaf, the leaf's APP remote through `proxy`, and a system connection to the hub. */
interface LinkedPair {
  readonly hub: NatsServerProcess;
  readonly leaf: NatsServerProcess;
  readonly proxy: CuttableProxy;
  readonly sys: NatsConnection;
  /** `server`'s own reply to a `$SYS` ping (the filter leaves the other silent). */
  data<T>(server: string, kind: string, options?: Record<string, unknown>): Promise<T>;
  /** The links of `server`, as its LEAFZ lists them now. */
  links(server: string): Promise<{ account: string; ip: string; port: number }[]>;
  close(): Promise<void>;
}

async function startLinkedPair(): Promise<LinkedPair> {
  const root = await mkdtemp(join(tmpdir(), "natsmon-leaf-links-"));
  const started: { stop(): Promise<void> }[] = [];
  let sys: NatsConnection | undefined;
  const close = async () => {
    await sys?.close();
    for (const s of started.reverse()) await s.stop();
    await rm(root, { recursive: true, force: true });
  };
  try {
    // The hub advertises the proxy as its leafnode URL: a leaf adds the URLs a hub's INFO
    // advertises to its remote's and reconnects to any of them, so after the first cut it
    // would go straight to the hub's own port, and the proxy would carry nothing to cut.
    const proxy = await CuttableProxy.start();
    started.push({ stop: () => proxy.close() });
    const hub = await launch({
      name: "hub",
      workDir: join(root, "hub"),
      port: -1,
      jetstream: false,
      extraConfig: `leafnodes { listen: "127.0.0.1:-1", advertise: "127.0.0.1:${proxy.port}" }\n`,
    });
    started.push(hub);
    sys = await connect({ servers: hub.clientUrl, user: SYS_USER.user, pass: SYS_USER.password });
    const monitor = sys;
    const varz = await sys.request("$SYS.REQ.SERVER.PING.VARZ", "{}", { timeout: 5000 });
    const leafPort = varz.json<{ data: { leaf: { port: number } } }>().data.leaf.port;
    proxy.upstreamPort = leafPort;
    const remote = (user: { user: string; password: string }, port: number, account: string) =>
      `{ urls: [${JSON.stringify(`nats-leaf://${user.user}:${user.password}@127.0.0.1:${port}`)}], account: ${account} }`;
    const leaf = await launch({
      name: "leaf",
      workDir: join(root, "leaf"),
      port: -1,
      jetstream: false,
      extraConfig: `leafnodes { remotes: [ ${remote(APP_USER, proxy.port, "APP")}, ${remote(SYS_USER, leafPort, "SYS")} ] }\n`,
    });
    started.push(leaf);
    const data = async <T>(server: string, kind: string, options: Record<string, unknown> = {}) => {
      const r = await monitor.request(
        `$SYS.REQ.SERVER.PING.${kind}`,
        JSON.stringify({ ...options, server_name: server }),
        { timeout: 5000 },
      );
      return r.json<{ data: T }>().data;
    };
    const links = async (server: string) =>
      (await data<{ leafs: { account: string; ip: string; port: number }[] | null }>(server, "LEAFZ"))
        .leafs ?? [];
    await waitFor(async () => (await links("leaf")).some((l) => l.account === "APP"), {
      timeoutMs: 30_000,
      message: "the leaf's APP link up",
    });
    return { hub, leaf, proxy, sys, data, links, close };
  } catch (err) {
    await close();
    throw err;
  }
}

describe("leaf-004 on a real 2.9.10 hub and leaf", () => {
  const scraped = SOURCES.filter((s) => ["varz", "leafz"].includes(s.name));
  let pair: LinkedPair;

  before(async () => {
    pair = await startLinkedPair();
  });

  after(async () => {
    await pair?.close();
  });

  async function rowsNow(check: typeof leaf004, params: Record<string, number> = {}) {
    const { replies } = await scrapeOneEpoch(pair.sys, scraped);
    await using fixture = await catalogWith([{ replies, marker: { servers_expected: SERVERS } }]);
    return await runCheck(fixture.catalog, check, fixture.epochs[0]!, params);
  }

  test("leaf-004 does not fire while the leaf's remotes are connected", async () => {
    const rows = await rowsNow(leaf004);
    assert.deepEqual(rows, []);
  });

  test("leaf-004 fires for the APP remote while its link is down, and resolves once it is back", async () => {
    pair.proxy.refusing = true;
    pair.proxy.cut();
    const rows = await waitFor(
      async () => {
        const found = await rowsNow(leaf004);
        return found.some((r) => r.entity_name === LEAF_APP) && found;
      },
      { timeoutMs: 30_000, message: "leaf-004 for the leaf's APP remote" },
    );
    assert.equal(rows.length, 1, "the SYS remote is connected");
    const row = rows[0]!;
    assert.equal(row.server, "leaf");
    assert.equal(row.account, "APP");
    assert.deepEqual(row.urls, [`127.0.0.1:${pair.proxy.port}`]);
    assert.ok(row.server_start instanceof Date || typeof row.server_start === "string");

    pair.proxy.refusing = false;
    await waitFor(async () => (await rowsNow(leaf004)).length === 0, {
      timeoutMs: 30_000,
      message: "leaf-004 to resolve once the APP link is back",
    });
  });
});
