/**
 * leaf-004 on real nats-server 2.9.10 processes, from what the fold stores of
 * real scrapes: a hub and a leaf whose APP remote goes through a TCP proxy the test cuts
 * (its SYS remote goes straight to the hub, so the leaf goes on answering `$SYS` pings).
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, connect as connectTcp, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import type { NatsServerProcess } from "../../../src/bus/index.ts";
import { LEAF_CHECKS } from "../../../src/checks/leaf/index.ts";
import { SOURCES } from "../../../src/scrape/index.ts";
import { APP_USER, SYS_USER, launch } from "../../harness/start-nats-server.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { scrapeOneEpoch } from "../catalog/live-scrape.ts";
import { catalogWith, runCheck } from "./check-harness.ts";

const SCRAPED = SOURCES.filter((s) => ["varz", "leafz"].includes(s.name));
const leaf004 = LEAF_CHECKS.find((c) => c.code === "leaf-004")!;
const LEAF_APP = "leaf -> remote (APP)";

/** A TCP proxy to `port` that can refuse new connections and cut the ones it carries. */
class CuttableProxy {
  readonly sockets = new Set<Socket>();
  refusing = false;
  readonly server: Server;
  private constructor(server: Server) {
    this.server = server;
  }

  static async start(port: number): Promise<CuttableProxy> {
    const server = createServer();
    const proxy = new CuttableProxy(server);
    server.on("connection", (client) => {
      if (proxy.refusing) return void client.destroy();
      const upstream = connectTcp(port, "127.0.0.1");
      for (const s of [client, upstream]) {
        proxy.sockets.add(s);
        s.on("error", () => {});
        s.on("close", () => {
          proxy.sockets.delete(s);
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return proxy;
  }

  get port(): number {
    return (this.server.address() as { port: number }).port;
  }

  cut(): void {
    for (const s of this.sockets) s.destroy();
  }

  async close(): Promise<void> {
    this.refusing = true;
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

describe("leaf-004 on a real 2.9.10 hub and leaf", () => {
  let root: string;
  let hub: NatsServerProcess;
  let leaf: NatsServerProcess;
  let proxy: CuttableProxy;
  let sys: NatsConnection;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), "natsmon-leaf-links-"));
    hub = await launch({
      name: "hub",
      workDir: join(root, "hub"),
      port: -1,
      jetstream: false,
      extraConfig: 'leafnodes { listen: "127.0.0.1:-1" }\n',
    });
    sys = await connect({ servers: hub.clientUrl, user: SYS_USER.user, pass: SYS_USER.password });
    const varz = await sys.request("$SYS.REQ.SERVER.PING.VARZ", "{}", { timeout: 5000 });
    const leafPort = varz.json<{ data: { leaf: { port: number } } }>().data.leaf.port;
    proxy = await CuttableProxy.start(leafPort);
    const remote = (user: { user: string; password: string }, port: number, account: string) =>
      `{ urls: [${JSON.stringify(`nats-leaf://${user.user}:${user.password}@127.0.0.1:${port}`)}], account: ${account} }`;
    leaf = await launch({
      name: "leaf",
      workDir: join(root, "leaf"),
      port: -1,
      jetstream: false,
      extraConfig: `leafnodes { remotes: [ ${remote(APP_USER, proxy.port, "APP")}, ${remote(SYS_USER, leafPort, "SYS")} ] }\n`,
    });
    await waitFor(async () => (await leafAccounts()).includes("APP"), {
      timeoutMs: 30_000,
      message: "the leaf's APP link up",
    });
  });

  after(async () => {
    await sys?.close();
    await proxy?.close();
    await leaf?.stop();
    await hub?.stop();
    if (root) await rm(root, { recursive: true, force: true });
  });

  /** The leaf's own reply to a `$SYS` ping (the filter leaves the hub silent). */
  async function leafData<T>(kind: string, options: Record<string, unknown> = {}): Promise<T> {
    const r = await sys.request(
      `$SYS.REQ.SERVER.PING.${kind}`,
      JSON.stringify({ ...options, server_name: "leaf" }),
      { timeout: 5000 },
    );
    return r.json<{ data: T }>().data;
  }

  /** The accounts of the leaf's links, as its LEAFZ lists them now. */
  async function leafAccounts(): Promise<string[]> {
    const data = await leafData<{ leafs: { account: string }[] | null }>("LEAFZ");
    return (data.leafs ?? []).map((l) => l.account);
  }

  async function rowsNow(check: typeof leaf004, params: Record<string, number> = {}) {
    const { replies } = await scrapeOneEpoch(sys, SCRAPED);
    await using fixture = await catalogWith([{ replies, marker: { servers_expected: ["hub", "leaf"] } }]);
    return await runCheck(fixture.catalog, check, fixture.epochs[0]!, params);
  }

  test("leaf-004 does not fire while the leaf's remotes are connected", async () => {
    const rows = await rowsNow(leaf004);
    assert.deepEqual(rows, []);
  });

  test("leaf-004 fires for the APP remote while its link is down, and resolves once it is back", async () => {
    proxy.refusing = true;
    proxy.cut();
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
    assert.deepEqual(row.urls, [`127.0.0.1:${proxy.port}`]);
    assert.ok(row.server_start instanceof Date || typeof row.server_start === "string");

    proxy.refusing = false;
    await waitFor(async () => (await rowsNow(leaf004)).length === 0, {
      timeoutMs: 30_000,
      message: "leaf-004 to resolve once the APP link is back",
    });
  });
});
