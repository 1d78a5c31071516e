/**
 * A connection's configuration row (hx.connection_opts) is written when what the connection
 * is changes, not when its reply inboxes do: clients subscribe a fresh inbox per request (or
 * one muxed inbox per connection), under `_INBOX.` or a custom inbox prefix. Real nats-server,
 * real scrapes, a real DuckDB file.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { Msg, NatsConnection } from "@nats-io/nats-core";
import { foldEpoch } from "../../../src/catalog/index.ts";
import { SOURCES } from "../../../src/scrape/index.ts";
import { APP_USER, startTestServer, SYS_USER } from "../../harness/start-nats-server.ts";
import { q, tempCatalog } from "./lab-epoch.ts";
import { scrapeOneEpoch } from "./live-scrape.ts";

const CHURN_EPOCHS = 4;

test("a client doing requests with fresh reply inboxes keeps one configuration row over epochs, and a new subscription still writes another", async () => {
  await using server = await startTestServer("s1");
  const app = { user: APP_USER.user, pass: APP_USER.password };
  const responder = await connect({ servers: server.url, name: "responder", ...app });
  const byDefault = await connect({ servers: server.url, name: "default-inbox", ...app });
  const custom = await connect({ servers: server.url, name: "custom-inbox", inboxPrefix: "_R_APP", ...app });
  const monitored = await connect({
    servers: server.url,
    name: "scraper",
    user: SYS_USER.user,
    pass: SYS_USER.password,
  });
  const clients: NatsConnection[] = [responder, byDefault, custom, monitored];
  // The responder answers only at the end: each request's inbox stays subscribed across the scrapes.
  const asked: Msg[] = [];
  responder.subscribe("churn.q", { callback: (_err, msg) => void asked.push(msg) });
  const pending: Promise<unknown>[] = [];
  const ask = (nc: NatsConnection, noMux: boolean) =>
    pending.push(nc.request("churn.q", "", { timeout: 120_000, noMux }).catch(() => undefined));
  try {
    await using t = await tempCatalog();
    for (let i = 0; i <= CHURN_EPOCHS; i++) {
      if (i === CHURN_EPOCHS) {
        // What the connections are changes: a subscription that is not an inbox.
        byDefault.subscribe("orders.created");
        custom.subscribe("orders.created");
      }
      ask(byDefault, true);
      ask(byDefault, false); // one muxed `_INBOX.<nuid>.*` for the connection, made at the first
      ask(custom, true);
      for (const nc of clients) await nc.flush();
      const { marker, replies } = await scrapeOneEpoch(monitored, SOURCES);
      const result = await foldEpoch(t.catalog, { markerSeq: i + 1, marker, replies });
      assert.equal(result.status, "folded");
    }
    // The inboxes were there to see: each epoch the clients held more subscriptions.
    assert.deepEqual(
      await q(
        t.catalog,
        `SELECT name, count(DISTINCT subscriptions) AS counts FROM hx.connections
         WHERE name IN ('default-inbox', 'custom-inbox') GROUP BY name ORDER BY name`,
      ),
      [
        { name: "custom-inbox", counts: CHURN_EPOCHS + 1 },
        { name: "default-inbox", counts: CHURN_EPOCHS + 1 },
      ],
    );
    assert.deepEqual(
      await q(
        t.catalog,
        `SELECT i.name, o.subjects, o.subjects_truncated
         FROM hx.connection_opts o JOIN (SELECT DISTINCT connection_pk, name FROM hx.connections) i USING (connection_pk)
         ORDER BY i.name, o.epoch`,
      ),
      [
        { name: "custom-inbox", subjects: [], subjects_truncated: false },
        { name: "custom-inbox", subjects: ["orders.created"], subjects_truncated: false },
        { name: "default-inbox", subjects: [], subjects_truncated: false },
        { name: "default-inbox", subjects: ["orders.created"], subjects_truncated: false },
        { name: "responder", subjects: ["churn.q"], subjects_truncated: false },
        { name: "scraper", subjects: [], subjects_truncated: false },
      ],
    );
  } finally {
    await responder.flush();
    for (const msg of asked) msg.respond("ok");
    await Promise.all(pending);
    for (const nc of clients) await nc.close();
  }
});
