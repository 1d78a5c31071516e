/**
 * leaf-003 on real nats-server 2.9.10 processes, from what the fold stores of real scrapes:
 * the leaf l1 is connected to the hub n1 through an APP and a SYS remote; 200 subscriptions
 * made on l1 are propagated over the APP connection and push the hub's figure for it over a
 * threshold set just above what it carried before; unsubscribed, it drops back below.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection, Subscription } from "@nats-io/nats-core";
import { LEAF_CHECKS } from "../../../src/checks/leaf/index.ts";
import { SOURCES } from "../../../src/scrape/index.ts";
import { SYS_USER, APP_USER } from "../../harness/start-nats-server.ts";
import { startTestSupercluster, type TestSupercluster } from "../../harness/start-nats-supercluster.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { scrapeOneEpoch } from "../catalog/live-scrape.ts";
import { catalogWith, runCheck } from "./check-harness.ts";

const SCRAPED = SOURCES.filter((s) => ["varz", "leafz"].includes(s.name));
const leaf003 = LEAF_CHECKS.find((c) => c.code === "leaf-003")!;
const HUB_APP = "n1 - 127.0.0.1 (APP)";

describe("leaf-003 on a real 2.9.10 hub and leaf", () => {
  let sc: TestSupercluster;
  let sys: NatsConnection;
  let leafClient: NatsConnection;
  let threshold = 0;

  before(async () => {
    sc = await startTestSupercluster();
    sys = await connect({ servers: sc.urls.n1, user: SYS_USER.user, pass: SYS_USER.password });
    leafClient = await connect({ servers: sc.urls.l1, user: APP_USER.user, pass: APP_USER.password });
  });

  after(async () => {
    await leafClient?.close();
    await sys?.close();
    await sc?.[Symbol.asyncDispose]();
  });

  async function leaf003Now(params: Record<string, number>): Promise<Record<string, unknown>[]> {
    const { replies } = await scrapeOneEpoch(sys, SCRAPED);
    await using fixture = await catalogWith([
      { replies, marker: { servers_expected: ["l1", "n1", "n2", "w1"] } },
    ]);
    return await runCheck(fixture.catalog, leaf003, fixture.epochs[0]!, params);
  }

  test("below the threshold the check does not fire for the hub's APP connection", async () => {
    // Every leafnode connection at or above 0: the hub's APP connection and what it carries now.
    const all = await leaf003Now({ p_warn_subs: 0, p_crit_subs: 1_000_000 });
    const hubApp = all.find((r) => r.entity_name === HUB_APP);
    assert.ok(hubApp, `rows: ${all.map((r) => String(r.entity_name)).join(", ")}`);
    assert.equal(hubApp.server, "n1");
    threshold = Number(hubApp.subscriptions) + 100;
    const rows = await leaf003Now({ p_warn_subs: threshold, p_crit_subs: threshold * 10 });
    assert.deepEqual(
      rows.filter((r) => r.entity_name === HUB_APP),
      [],
    );
  });

  test("200 subscriptions on the leaf reach the hub and the check fires for the connection", async () => {
    const subs: Subscription[] = [];
    for (let i = 0; i < 200; i++) subs.push(leafClient.subscribe(`sensor.${i}.reading`));
    await leafClient.flush();
    const rows = await waitFor(
      async () => {
        const found = await leaf003Now({ p_warn_subs: threshold, p_crit_subs: threshold * 10 });
        return found.some((r) => r.entity_name === HUB_APP) && found;
      },
      { timeoutMs: 30_000, message: "leaf-003 for the hub's APP connection" },
    );
    const hubApp = rows.find((r) => r.entity_name === HUB_APP)!;
    assert.equal(hubApp.severity, "warning");
    assert.equal(hubApp.account, "APP");
    assert.ok(Number(hubApp.subscriptions) >= threshold);

    for (const sub of subs) sub.unsubscribe();
    await leafClient.flush();
    await waitFor(
      async () => {
        const found = await leaf003Now({ p_warn_subs: threshold, p_crit_subs: threshold * 10 });
        return !found.some((r) => r.entity_name === HUB_APP);
      },
      { timeoutMs: 30_000, message: "leaf-003 to clear once the subscriptions are gone" },
    );
  });
});
