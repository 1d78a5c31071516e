import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { foldEpoch, openCatalog, type ScrapeReply } from "../../../src/catalog/index.ts";
import { tempDir } from "../../harness/temp-dir.ts";
import { count, labEpoch, labReplies, q, rows, tempCatalog, TEST_DB, sourceReplies } from "./lab-epoch.ts";

const E1 = "2026-11-22T11:02:13.000Z";
const E2 = "2026-11-22T11:03:13.000Z";
const E3 = "2026-11-22T11:04:13.000Z";

interface Connz {
  server: Record<string, unknown>;
  data: { connections: Record<string, unknown>[] } & Record<string, unknown>;
}

/** The lab epoch with the sources of this kind: connz, accstatz, accountz, subsz. */
function epochReplies(
  editConnz: (server: string, body: Connz) => ScrapeReply[] | undefined = () => undefined,
) {
  const connz = sourceReplies("connz").flatMap(
    (r) => editConnz(r.server, structuredClone(r.body) as Connz) ?? [r],
  );
  return [
    ...labReplies(),
    ...connz,
    ...sourceReplies("accstatz"),
    ...sourceReplies("accountz"),
    ...sourceReplies("subsz"),
  ];
}

test("the lab's CONNZ lands 10 connections keyed by server, cid and start, with durations in ns", async () => {
  await using t = await tempCatalog();
  await foldEpoch(t.catalog, labEpoch(E1, 1, epochReplies()));
  const [epoch] = await q(t.catalog, "SELECT errors FROM hx.epochs");
  assert.deepEqual(epoch?.errors, []);
  assert.equal(await count(t.catalog, "connection_ident"), 10);
  assert.deepEqual(
    await q(t.catalog, "SELECT server, count(*) AS n FROM hx.connections GROUP BY server ORDER BY server"),
    [
      { server: "l1", n: 1 },
      { server: "n1", n: 6 },
      { server: "n2", n: 3 },
    ],
  );
  const [publisher] = await rows(
    t.catalog,
    `SELECT server, cid, start, name, account, authorized_user, ip, port, lang, subjects, subjects_truncated,
            in_msgs, subscriptions, rtt_ns, uptime_ns, idle_ns
       FROM hx.connections WHERE name = 'app-publisher'`,
  );
  assert.deepEqual(
    { ...publisher, start: (publisher?.start as Date).toISOString() },
    {
      server: "n1",
      cid: 17n,
      start: "2026-11-22T10:47:58.325Z",
      name: "app-publisher",
      account: "APP",
      authorized_user: "app",
      ip: "127.0.0.1",
      port: 60122,
      lang: "nats.js",
      // Its one subscription is its muxed reply inbox: counted, not listed as configuration.
      subjects: [],
      subjects_truncated: false,
      in_msgs: 6236n,
      subscriptions: 1n,
      rtt_ns: 717_000n,
      uptime_ns: 857_000_000_000n,
      idle_ns: 0n,
    },
  );
  const [scraper] = await rows(t.catalog, "SELECT rtt_ns FROM hx.connections WHERE name = 'lab-scraper-sys'");
  assert.equal(scraper?.rtt_ns, 4_709_186n);
  assert.deepEqual(await rows(t.catalog, "SELECT * EXCLUDE (first_epoch, last_epoch) FROM main.ips"), [
    { ip: "127.0.0.1", connections: 10n, country: null, city: null, asn: null },
  ]);
});

test("accounts get a row per server from STATZ, and JetStream usage once per domain from its meta leader", async () => {
  await using t = await tempCatalog();
  await foldEpoch(t.catalog, labEpoch(E1, 1, epochReplies()));
  assert.deepEqual(
    (await q(t.catalog, "SELECT name FROM hx.account_ident ORDER BY name")).map((r) => r.name),
    ["$G", "APP", "OTHER", "SYS"],
  );
  assert.equal(await count(t.catalog, "account_stats"), 24);
  assert.deepEqual(
    await q(
      t.catalog,
      `SELECT server, conns, leafnodes, total_conns, sent_msgs, js_domain, js_storage, js_streams, js_consumers
         FROM hx.accounts WHERE account = 'APP' AND (conns > 0 OR js_domain IS NOT NULL) ORDER BY server`,
    ),
    [
      {
        server: "l1",
        conns: 1,
        leafnodes: 1,
        total_conns: 2,
        sent_msgs: 2,
        js_domain: "leaf",
        js_storage: 1250,
        js_streams: 1,
        js_consumers: 0,
      },
      {
        server: "n1",
        conns: 4,
        leafnodes: 0,
        total_conns: 4,
        sent_msgs: 26962,
        js_domain: "hub",
        js_storage: 661768,
        js_streams: 8,
        js_consumers: 6,
      },
      {
        server: "n2",
        conns: 3,
        leafnodes: 1,
        total_conns: 4,
        sent_msgs: 9307,
        js_domain: null,
        js_storage: null,
        js_streams: null,
        js_consumers: null,
      },
    ],
  );
  const opts = await rows(
    t.catalog,
    `SELECT i.name, o.is_system, o.jetstream, o.js_limits_domain, o.js_max_memory
       FROM hx.account_opts o JOIN hx.account_ident i USING (account_pk) ORDER BY i.name`,
  );
  assert.deepEqual(opts, [
    { name: "$G", is_system: false, jetstream: false, js_limits_domain: null, js_max_memory: null },
    {
      name: "APP",
      is_system: false,
      jetstream: true,
      js_limits_domain: "hub",
      js_max_memory: 2n ** 64n - 1n,
    },
    { name: "OTHER", is_system: false, jetstream: false, js_limits_domain: null, js_max_memory: null },
    { name: "SYS", is_system: true, jetstream: false, js_limits_domain: null, js_max_memory: null },
  ]);
  assert.deepEqual(
    await q(
      t.catalog,
      `SELECT i.name AS server, s.num_subscriptions, s.max_fanout FROM hx.subscription_stats s
         JOIN hx.server_ident i USING (server_pk) WHERE i.name IN ('n1', 'w1') ORDER BY 1`,
    ),
    [
      { server: "n1", num_subscriptions: 386, max_fanout: 3 },
      { server: "w1", num_subscriptions: 112, max_fanout: 4 },
    ],
  );
});

test("a server's CONNZ pages are folded as one list; the same page twice is dropped and recorded", async () => {
  await using t = await tempCatalog();
  const paged = epochReplies((server, body) => {
    if (server !== "n1") return undefined;
    const all = body.data.connections;
    const page = (n: number, list: Record<string, unknown>[]): ScrapeReply => ({
      source: "connz",
      server,
      page: n,
      body: { ...body, data: { ...body.data, num_connections: list.length, connections: list } },
    });
    return [page(1, all.slice(0, 4)), page(2, all.slice(4)), page(2, all.slice(4))];
  });
  await foldEpoch(t.catalog, labEpoch(E1, 1, paged));
  assert.deepEqual(await q(t.catalog, "SELECT count(*) AS n FROM hx.connections WHERE server = 'n1'"), [
    { n: 6 },
  ]);
  const [epoch] = await q(t.catalog, "SELECT errors FROM hx.epochs");
  assert.deepEqual(epoch?.errors, ["connz from n1 page 2: duplicate reply dropped"]);
});

test("over epochs: _opts only on change, a restarted server's reused cid is a new connection, main.ips upserted", async () => {
  await using dir = await tempDir("natsmon-catalog-");
  const path = join(dir.path, "lab.duckdb");
  const renamed = (server: string, body: Connz): ScrapeReply[] | undefined => {
    if (server !== "n1") return undefined;
    const [first, ...rest] = body.data.connections;
    // cid 17 renamed (an _opts change, not a new connection); cid 53 restarted with a new start.
    const moved = rest.map((c) =>
      c.cid === 53 ? { ...c, start: "2026-11-22T11:02:00Z", ip: "10.0.0.7" } : c,
    );
    const connections = [{ ...first, name: "app-publisher-2" }, ...moved];
    return [{ source: "connz", server, body: { ...body, data: { ...body.data, connections } } }];
  };
  {
    await using catalog = await openCatalog({ path, db: TEST_DB });
    await foldEpoch(catalog, labEpoch(E1, 1, epochReplies()));
    await foldEpoch(catalog, labEpoch(E2, 2, epochReplies()));
    assert.equal(await count(catalog, "connection_opts"), 10);
    assert.equal(await count(catalog, "account_opts"), 4);
    assert.equal(await count(catalog, "connection_stats"), 20);
  }
  // Reopened, the key cache is read back from the tables: the same connections keep their pks.
  await using catalog = await openCatalog({ path, db: TEST_DB });
  await foldEpoch(catalog, labEpoch(E3, 3, epochReplies(renamed)));
  assert.equal(await count(catalog, "connection_ident"), 11);
  assert.equal(await count(catalog, "connection_opts"), 12);
  assert.equal(await count(catalog, "account_opts"), 4);
  assert.deepEqual(
    await q(
      catalog,
      "SELECT name, count(*) AS epochs FROM hx.connections WHERE cid = 17 GROUP BY name ORDER BY name",
    ),
    [
      { name: "app-publisher", epochs: 2 },
      { name: "app-publisher-2", epochs: 1 },
    ],
  );
  assert.deepEqual(
    await q(catalog, "SELECT ip, first_epoch, last_epoch, connections FROM main.ips ORDER BY ip"),
    [
      { ip: "10.0.0.7", first_epoch: E3, last_epoch: E3, connections: 1 },
      { ip: "127.0.0.1", first_epoch: E1, last_epoch: E3, connections: 10 },
    ],
  );
});
