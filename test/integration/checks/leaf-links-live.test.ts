/**
 * leaf-004 and leaf-005 on real nats-server 2.9.10 processes, from what the fold stores of
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
import type { ScrapeReply } from "../../../src/catalog/index.ts";
import { LEAF_CHECKS } from "../../../src/checks/leaf/index.ts";
import { SOURCES } from "../../../src/scrape/index.ts";
import { CuttableProxy } from "../../harness/cuttable-proxy.ts";
import { APP_USER, SYS_USER, launch } from "../../harness/start-nats-server.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { scrapeOneEpoch } from "../catalog/live-scrape.ts";
import { catalogWith, runCheck, type FixtureEpoch } from "./check-harness.ts";

const leaf004 = LEAF_CHECKS.find((c) => c.code === "leaf-004")!;
const leaf005 = LEAF_CHECKS.find((c) => c.code === "leaf-005")!;
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

/** A closed leafnode connection as CONNZ (state closed) lists it. */
interface LeafClose {
  cid: number;
  kind: string;
  account?: string;
  name?: string;
  stop: string;
  reason: string;
}

describe("leaf-005 on a real 2.9.10 hub and leaf whose APP link is cut three times", () => {
  const scraped = SOURCES.filter((s) => ["varz", "leafz", "connz_closed"].includes(s.name));
  const CUTS = 3;
  let pair: LinkedPair;
  /** An epoch before the first cut, then one after each cut, each timed as scraped. */
  const epochs: { replies: ScrapeReply[]; at: string }[] = [];
  /** Each end's closes of the APP link, oldest first, as its CONNZ lists them after the cuts. */
  const closes = new Map<string, LeafClose[]>();

  async function scrape(): Promise<{ replies: ScrapeReply[]; at: string }> {
    const { replies, marker } = await scrapeOneEpoch(pair.sys, scraped);
    return { replies, at: new Date(marker.epoch).toISOString() };
  }

  /** Each epoch as folded, expecting both servers; `drop` leaves a server's replies out. */
  function folded(list: readonly { replies: ScrapeReply[]; at: string }[], drop?: string): FixtureEpoch[] {
    return list.map((e) => ({
      replies: e.replies.filter((r) => r.server !== drop),
      at: e.at,
      marker: { servers_expected: SERVERS },
    }));
  }

  /** `auth` too: 2.9.10 gives a closed connection's account only with it. */
  async function appCloses(server: string): Promise<LeafClose[]> {
    const data = await pair.data<{ connections: LeafClose[] | null }>(server, "CONNZ", {
      state: 1,
      auth: true,
      limit: 1024,
    });
    return (data.connections ?? [])
      .filter((c) => c.kind === "Leafnode" && c.account === "APP")
      .sort((a, b) => Date.parse(a.stop) - Date.parse(b.stop));
  }

  before(async () => {
    pair = await startLinkedPair();
    epochs.push(await scrape());
    for (let cut = 1; cut <= CUTS; cut++) {
      // The hub sees the APP link from the proxy's side: a new ephemeral port is a new link.
      const before = new Set((await pair.links("hub")).filter((l) => l.account === "APP").map((l) => l.port));
      assert.equal(before.size, 1, "one APP link at the hub before the cut");
      pair.proxy.cut();
      await waitFor(
        async () => {
          const hubApp = (await pair.links("hub")).filter((l) => l.account === "APP");
          const leafUp = (await pair.links("leaf")).some((l) => l.account === "APP");
          return leafUp && hubApp.length === 1 && !before.has(hubApp[0]!.port);
        },
        { timeoutMs: 30_000, message: `a new APP link after cut ${cut}` },
      );
      // Each end saves a close from its own goroutine: wait until both list it.
      await waitFor(
        async () => (await appCloses("leaf")).length === cut && (await appCloses("hub")).length === cut,
        { timeoutMs: 30_000, message: `both ends listing close ${cut} of the APP link` },
      );
      epochs.push(await scrape());
    }
    for (const server of SERVERS) closes.set(server, await appCloses(server));
  });

  after(async () => {
    await pair?.close();
  });

  test("fires at the leaf once the cuts reach p_closes, each close counted once, and never at the hub", async () => {
    await using fixture = await catalogWith(folded(epochs));
    // Each end lists each cut: the hub naming the leaf, the leaf naming nothing (2.9.10).
    for (const c of closes.get("hub")!) assert.equal(c.name, "leaf");
    for (const c of closes.get("leaf")!) assert.ok(!c.name, `the leaf's close ${c.cid} names ${c.name}`);
    assert.deepEqual(
      SERVERS.map((s) => closes.get(s)!.length),
      [CUTS, CUTS],
    );
    const params = { p_closes: CUTS, p_window_minutes: 60 };
    const last = fixture.epochs.at(-1)!;
    assert.deepEqual(await runCheck(fixture.catalog, leaf005, fixture.epochs.at(-2)!, params), []);

    const rows = await runCheck(fixture.catalog, leaf005, last, params);
    assert.deepEqual(
      rows.map((r) => r.entity_name),
      [LEAF_APP],
      "one finding, at the leaf: the hub's records of the same closes are not counted again",
    );
    const row = rows[0]!;
    const leafCloses = closes.get("leaf")!;
    assert.equal(row.server, "leaf");
    assert.equal(row.account, "APP");
    assert.equal(Number(row.closes), CUTS);
    assert.equal((row.first_close as Date).getTime(), Date.parse(leafCloses[0]!.stop));
    assert.equal((row.last_close as Date).getTime(), Date.parse(leafCloses.at(-1)!.stop));
    assert.equal(row.last_reason, leafCloses.at(-1)!.reason);
    assert.equal(row.remote, `127.0.0.1:${pair.proxy.port}`);
    assert.equal(Number(row.window_minutes), 60);
  });

  test("counts the closes at the hub, naming the leaf, when the leaf did not answer", async () => {
    await using fixture = await catalogWith(folded(epochs, "leaf"));
    const rows = await runCheck(fixture.catalog, leaf005, fixture.epochs.at(-1)!, {
      p_closes: CUTS,
      p_window_minutes: 60,
    });
    assert.deepEqual(
      rows.map((r) => r.entity_name),
      ["hub - leaf (APP)"],
    );
    const hubCloses = closes.get("hub")!;
    assert.equal(Number(rows[0]!.closes), CUTS);
    assert.equal(rows[0]!.remote, "leaf");
    assert.equal((rows[0]!.last_close as Date).getTime(), Date.parse(hubCloses.at(-1)!.stop));
  });

  test("resolves once the first close is older than the window", async () => {
    // A window just long enough for the cuts at the last epoch, in whole seconds (the
    // macro counts it so): all three are in it there, and the first leaves it a few seconds on.
    const last = epochs.at(-1)!;
    const firstStop = Date.parse(closes.get("leaf")![0]!.stop);
    const windowSeconds = Math.ceil((Date.parse(last.at) - firstStop) / 1000) + 1;
    const params = { p_closes: CUTS, p_window_minutes: windowSeconds / 60 };
    {
      await using fixture = await catalogWith(folded(epochs));
      const rows = await runCheck(fixture.catalog, leaf005, fixture.epochs.at(-1)!, params);
      assert.deepEqual(
        rows.map((r) => [r.entity_name, Number(r.closes)]),
        [[LEAF_APP, CUTS]],
      );
    }
    const resolved = await waitFor(
      async () => {
        const later = await scrape();
        await using fixture = await catalogWith(folded([...epochs, later]));
        const epoch = fixture.epochs.at(-1)!;
        if ((await runCheck(fixture.catalog, leaf005, epoch, params)).length > 0) return false;
        // The closes are still there: over a longer window the same epoch still counts them all.
        return await runCheck(fixture.catalog, leaf005, epoch, { ...params, p_window_minutes: 60 });
      },
      { timeoutMs: 60_000, intervalMs: 500, message: "leaf-005 to resolve as the closes leave the window" },
    );
    assert.deepEqual(
      resolved.map((r) => [r.entity_name, Number(r.closes)]),
      [[LEAF_APP, CUTS]],
    );
  });
});
