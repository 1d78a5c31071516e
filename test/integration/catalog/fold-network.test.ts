import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { foldEpoch, type ScrapeReply } from "../../../src/catalog/index.ts";
import { parseJsonExact } from "../../../src/lib/index.ts";
import { count, labEpoch, labReplies, q, tempCatalog } from "./lab-epoch.ts";

const FIXTURES = join(import.meta.dirname, "../../fixtures/scrape/lab-2.9.10");
const E1 = "2026-11-22T11:02:13.000Z";
const E2 = "2026-11-22T11:03:13.000Z";
const E3 = "2026-11-22T11:04:13.000Z";
const N3_ID = "NBKJ7GWCEAW3HY6LO3NH4ST6JWIDBK6JFDOWWJQLHN43S6MBSYISJUNF";

/** Replies of one recorded fixture file, as `source`. */
function fixtureReplies(file: string, source: string): ScrapeReply[] {
  const { bodies } = parseJsonExact(readFileSync(join(FIXTURES, file), "utf8")) as { bodies: unknown[] };
  return bodies.map((body) => ({ source, server: (body as { server: { name: string } }).server.name, body }));
}

/** The lab epoch with its ROUTEZ, GATEWAYZ and LEAFZ replies. */
function networkReplies(): ScrapeReply[] {
  return [
    ...labReplies(),
    ...fixtureReplies("routez.json", "routez"),
    ...fixtureReplies("gatewayz.json", "gatewayz"),
    ...fixtureReplies("leafz.json", "leafz"),
  ];
}

test("2.9.10 routes are named by mapping remote_id through the epoch's replies, durations in ns", async () => {
  await using t = await tempCatalog();
  await foldEpoch(t.catalog, labEpoch(E1, 1, networkReplies()));
  assert.deepEqual((await q(t.catalog, "SELECT errors FROM hx.epochs"))[0]?.errors, []);
  assert.deepEqual(
    await q(
      t.catalog,
      "SELECT server, cluster, remote, account, pool_index FROM hx.routes ORDER BY server, remote",
    ),
    [
      ["n1", "n2"],
      ["n1", "n3"],
      ["n2", "n1"],
      ["n2", "n3"],
      ["n3", "n1"],
      ["n3", "n2"],
      ["w1", "w2"],
      ["w2", "w1"],
    ].map(([server, remote]) => ({
      server,
      cluster: server!.startsWith("n") ? "east" : "west",
      remote,
      account: "",
      pool_index: 0,
    })),
  );
  assert.deepEqual(
    await q(
      t.catalog,
      "SELECT remote_id, rid, port, rtt_ns, uptime_ns, idle_ns, pending_size, in_msgs, out_bytes, subscriptions, did_solicit, is_configured, compression, start FROM hx.routes WHERE server = 'n1' AND remote = 'n2'",
    ),
    [
      {
        remote_id: "NCGTRBE3ZJP3MNHGUV75RM5MZDHNNMT36JPKJOAMIB5YKU67CXI2J7TY",
        rid: 10,
        port: 39286,
        rtt_ns: 223000,
        uptime_ns: 930000000000,
        idle_ns: 0,
        pending_size: 0,
        in_msgs: 62479,
        out_bytes: 335306835,
        subscriptions: 147,
        did_solicit: true,
        is_configured: true,
        compression: null,
        // Nanoseconds are cut to microseconds.
        start: "2026-11-22T10:46:46.751580Z",
      },
    ],
  );
});

test("a remote that answered nothing this epoch is keyed by its server id", async () => {
  await using t = await tempCatalog();
  const withoutN3 = networkReplies().filter((r) => r.server !== "n3");
  await foldEpoch(t.catalog, labEpoch(E1, 1, withoutN3));
  assert.deepEqual(
    await q(t.catalog, "SELECT server, remote FROM hx.routes WHERE cluster = 'east' ORDER BY ALL"),
    [
      { server: "n1", remote: N3_ID },
      { server: "n1", remote: "n2" },
      { server: "n2", remote: N3_ID },
      { server: "n2", remote: "n1" },
    ],
  );
});

test("gateways appear outbound once per server and inbound once per remote server, remotes named", async () => {
  await using t = await tempCatalog();
  await foldEpoch(t.catalog, labEpoch(E1, 1, networkReplies()));
  assert.deepEqual(
    await q(
      t.catalog,
      "SELECT server, gateway, direction, remote_server, connected, configured FROM hx.gateways ORDER BY server, direction DESC, remote_server",
    ),
    [
      ["n1", "west", "outbound", "w2", true],
      ["n2", "west", "outbound", "w1", true],
      ["n2", "west", "inbound", "w1", false],
      ["n2", "west", "inbound", "w2", false],
      ["n3", "west", "outbound", "w2", true],
      ["w1", "east", "outbound", "n2", true],
      ["w1", "east", "inbound", "n2", false],
      ["w2", "east", "outbound", "n2", true],
      ["w2", "east", "inbound", "n1", false],
      ["w2", "east", "inbound", "n3", false],
    ].map(([server, gateway, direction, remote_server, configured]) => ({
      server,
      gateway,
      direction,
      remote_server,
      connected: true,
      configured,
    })),
  );
  const [n3] = await q(
    t.catalog,
    "SELECT rtt_ns, uptime_ns, out_msgs, accounts, accounts_not_interest_only FROM hx.gateways WHERE server = 'n3'",
  );
  assert.deepEqual(n3, {
    rtt_ns: 1841690,
    uptime_ns: 471000000000,
    out_msgs: 20740,
    accounts: 4,
    accounts_not_interest_only: 0,
  });
  assert.equal(await count(t.catalog, "gateway_expected"), 0);
});

test("a configured gateway whose remote cluster is down shows in hx.gateway_expected", async () => {
  await using t = await tempCatalog();
  await foldEpoch(t.catalog, labEpoch(E1, 1, networkReplies()));
  // West stopped: w1 and w2 answer nothing and the east servers' GATEWAYZ maps are empty.
  const westDown = [
    ...networkReplies().filter((r) => r.source !== "gatewayz" && r.server[0] !== "w"),
    ...fixtureReplies("gatewayz-west-down.json", "gatewayz"),
  ];
  await foldEpoch(t.catalog, labEpoch(E2, 2, westDown));
  assert.deepEqual(
    await q(t.catalog, "SELECT epoch, server, cluster, gateway FROM hx.gateway_expected ORDER BY ALL"),
    [
      { epoch: E2, server: "n1", cluster: "east", gateway: "west" },
      { epoch: E2, server: "n2", cluster: "east", gateway: "west" },
      { epoch: E2, server: "n3", cluster: "east", gateway: "west" },
    ],
  );
  // The outbound links keep their identity across the outage.
  assert.deepEqual(
    await q(
      t.catalog,
      "SELECT server, count(DISTINCT gateway_pk) AS links, list(connected ORDER BY epoch) AS connected FROM hx.gateways WHERE direction = 'outbound' AND cluster = 'east' GROUP BY server ORDER BY server",
    ),
    ["n1", "n2", "n3"].map((server) => ({ server, links: 1, connected: [true, false] })),
  );
});

test("leafnodes are listed by both ends, keyed by account and the remote's IP in 2.9.10", async () => {
  await using t = await tempCatalog();
  await foldEpoch(t.catalog, labEpoch(E1, 1, networkReplies()));
  assert.deepEqual(
    await q(
      t.catalog,
      "SELECT server, cluster, account, remote, name, port, rtt_ns, in_msgs, is_spoke FROM hx.leafnodes ORDER BY ALL",
    ),
    [
      ["l1", "l1", "APP", 5222, 418000, 2],
      ["l1", "l1", "SYS", 5222, 672000, 24287],
      ["n2", "east", "APP", 36650, 157000, 2],
      ["n2", "east", "SYS", 36644, 842000, 169],
    ].map(([server, cluster, account, port, rtt_ns, in_msgs]) => ({
      server,
      cluster,
      account,
      remote: "127.0.0.1",
      name: null,
      port,
      rtt_ns,
      in_msgs,
      is_spoke: null,
    })),
  );
});

test("link _opts are written on first sight and again only when they change", async () => {
  await using t = await tempCatalog();
  await foldEpoch(t.catalog, labEpoch(E1, 1, networkReplies()));
  await foldEpoch(t.catalog, labEpoch(E2, 2, networkReplies()));
  const tables = [
    "route_opts",
    "gateway_opts",
    "leafnode_opts",
    "route_stats",
    "gateway_stats",
    "leafnode_stats",
  ];
  const counts = async () => Promise.all(tables.map((table) => count(t.catalog, table)));
  assert.deepEqual(await counts(), [8, 10, 4, 16, 20, 8]);

  // n1's route to n2 comes back solicited by the other side.
  const changed = networkReplies().map((r) => {
    if (r.source !== "routez" || r.server !== "n1") return r;
    const body = structuredClone(r.body) as { data: { routes: { rid: number; did_solicit: boolean }[] } };
    for (const route of body.data.routes) if (route.rid === 10) route.did_solicit = false;
    return { ...r, body };
  });
  await foldEpoch(t.catalog, labEpoch(E3, 3, changed));
  assert.deepEqual(await counts(), [9, 10, 4, 24, 30, 12]);
  assert.deepEqual(
    await q(
      t.catalog,
      "SELECT epoch, did_solicit FROM hx.routes WHERE server = 'n1' AND remote = 'n2' ORDER BY epoch",
    ),
    [
      { epoch: E1, did_solicit: true },
      { epoch: E2, did_solicit: true },
      { epoch: E3, did_solicit: false },
    ],
  );
  assert.equal(await count(t.catalog, "route_ident"), 8);
});
