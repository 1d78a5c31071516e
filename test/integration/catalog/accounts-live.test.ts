import { test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { foldEpoch } from "../../../src/catalog/index.ts";
import { SOURCES, type Source } from "../../../src/scrape/index.ts";
import { APP_USER, startTestServer, SYS_USER } from "../../harness/start-nats-server.ts";
import { q, tempCatalog } from "./lab-epoch.ts";
import { scrapeOneEpoch } from "./live-scrape.ts";

/** CONNZ pages of 2, so the 5 connections of the test span 3 pages. */
const PAGE = 2;
const SOURCES_PAGED: readonly Source[] = SOURCES.map((s) =>
  s.name === "connz" ? { ...s, body: { ...s.body, limit: PAGE }, paged: { ...s.paged!, limit: PAGE } } : s,
);

test("named connections of a real nats-server in two accounts land with their accounts, over CONNZ pages", async () => {
  await using server = await startTestServer("s1");
  const clients: NatsConnection[] = [];
  try {
    for (const name of ["app-a", "app-b", "app-c"]) {
      const nc = await connect({ servers: server.url, name, user: APP_USER.user, pass: APP_USER.password });
      nc.subscribe(`orders.${name}`);
      nc.subscribe("orders.all");
      clients.push(nc);
    }
    clients.push(
      await connect({ servers: server.url, name: "sys-x", user: SYS_USER.user, pass: SYS_USER.password }),
    );
    const monitored = await connect({
      servers: server.url,
      name: "natsmon-scraper",
      user: SYS_USER.user,
      pass: SYS_USER.password,
    });
    clients.push(monitored);
    for (const nc of clients) await nc.flush();

    const { marker, replies } = await scrapeOneEpoch(monitored, SOURCES_PAGED);
    const connzPages = marker.parts.filter((p) => p.source === "connz").map((p) => p.page);
    assert.deepEqual(connzPages, [1, 2, 3]);

    await using t = await tempCatalog();
    const result = await foldEpoch(t.catalog, { markerSeq: 1, marker, replies });
    assert.equal(result.status, "folded");
    // Every reply is readable (STATSZ's payload is under `statsz`, not `data`); what 2.9.10
    // does not have is recorded apart, as unsupported.
    assert.deepEqual(await q(t.catalog, "SELECT errors, unsupported FROM hx.epochs"), [
      { errors: [], unsupported: ["idz: s1", "raftz: s1", "ipqueuesz: s1"] },
    ]);
    assert.deepEqual(
      await q(t.catalog, "SELECT server, name, account, authorized_user FROM hx.connections ORDER BY name"),
      [
        { server: "s1", name: "app-a", account: "APP", authorized_user: "app" },
        { server: "s1", name: "app-b", account: "APP", authorized_user: "app" },
        { server: "s1", name: "app-c", account: "APP", authorized_user: "app" },
        { server: "s1", name: "natsmon-scraper", account: "SYS", authorized_user: "sys" },
        { server: "s1", name: "sys-x", account: "SYS", authorized_user: "sys" },
      ],
    );
    assert.deepEqual(
      await q(
        t.catalog,
        "SELECT name, subjects FROM hx.connections WHERE account = 'APP' OR name = 'sys-x' ORDER BY name",
      ),
      [
        { name: "app-a", subjects: ["orders.all", "orders.app-a"] },
        { name: "app-b", subjects: ["orders.all", "orders.app-b"] },
        { name: "app-c", subjects: ["orders.all", "orders.app-c"] },
        { name: "sys-x", subjects: [] },
      ],
    );
    assert.deepEqual(
      await q(t.catalog, "SELECT account, server, conns FROM hx.accounts WHERE conns > 0 ORDER BY account"),
      [
        { account: "APP", server: "s1", conns: 3 },
        { account: "SYS", server: "s1", conns: 2 },
      ],
    );
    assert.deepEqual(await q(t.catalog, "SELECT ip, connections FROM main.ips"), [
      { ip: "127.0.0.1", connections: 5 },
    ]);
    const [subsz] = await q(
      t.catalog,
      "SELECT count(*) AS n, min(num_subscriptions) AS subs FROM hx.subscription_stats",
    );
    assert.equal(subsz?.n, 1);
    assert.ok((subsz?.subs as number) >= 6, "the clients' 6 subscriptions are in the sublist");
  } finally {
    for (const nc of clients) await nc.close();
  }
});
