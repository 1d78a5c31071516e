/**
 * A scrape through a connection that is not in the system account, against a real server:
 * the account's default imports answer the connection list and account statistics, every
 * other `$SYS` request has no responders. That is an error of the epoch naming the cause,
 * not "the servers are too old": only sources with a first release above the servers'
 * are recorded as unsupported. A server that answers some requests and not another it
 * serves is partial: its figures are incomplete, and its findings are kept as they were.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { connect } from "@nats-io/transport-node";
import { SOURCES } from "../../../src/scrape/index.ts";
import { startTestCluster } from "../../harness/start-nats-cluster.ts";
import { APP_USER, SYS_USER, startTestServer } from "../../harness/start-nats-server.ts";
import { scrapeOneEpoch } from "../catalog/live-scrape.ts";

test("no responders outside the system account is an error naming it; only sources newer than 2.9.10 are unsupported", async () => {
  await using server = await startTestServer("sysacct");
  const app = await connect({ servers: server.url, user: APP_USER.user, pass: APP_USER.password });
  const sys = await connect({ servers: server.url, user: SYS_USER.user, pass: SYS_USER.password });
  try {
    const { marker } = await scrapeOneEpoch(app, SOURCES);
    const varz = marker.errors.find((e) => e.source === "varz");
    assert.ok(varz, `an error for varz: ${JSON.stringify(marker.errors)}`);
    assert.match(varz.error, /no server answered \$SYS\.REQ\.SERVER\.PING\.VARZ \(no responders\)/);
    assert.match(varz.error, /is the connection in the system account\?/);
    const newer = SOURCES.filter((s) => s.since).map((s) => s.name);
    assert.deepEqual(
      marker.unsupported.map((u) => u.source),
      SOURCES.map((s) => s.name).filter((name) => newer.includes(name)),
      "unsupported: only the sources whose first release is above 2.9.10",
    );

    // In the system account the same server answers everything it supports: no error.
    const { marker: inSys } = await scrapeOneEpoch(sys, SOURCES);
    assert.deepEqual(inSys.errors, []);
    assert.deepEqual(
      inSys.unsupported.map((u) => u.source),
      marker.unsupported.map((u) => u.source),
    );
  } finally {
    await app.close();
    await sys.close();
  }
});

test("a server that answers some requests of an epoch and not another it serves is partial, and the error names it", async () => {
  await using cluster = await startTestCluster({ size: 3 });
  const sys = await connect({
    servers: cluster.urls.split(","),
    user: SYS_USER.user,
    pass: SYS_USER.password,
  });
  try {
    const varz = SOURCES.find((s) => s.name === "varz")!;
    const n1 = await sys.request("$SYS.REQ.SERVER.PING.VARZ", "{}", { timeout: 2000 });
    const { server } = n1.json<{ server: { id: string; name: string } }>();
    // A request only one server answers: the others answered VARZ, and are missing here.
    const one = { name: "healthz", subject: `$SYS.REQ.SERVER.${server.id}.HEALTHZ`, body: {} };
    const { marker, summary } = await scrapeOneEpoch(sys, [varz, one]);
    const others = ["n1", "n2", "n3"].filter((n) => n !== server.name);
    assert.deepEqual(marker.servers_answered, ["n1", "n2", "n3"]);
    assert.deepEqual(marker.servers_partial, others);
    // What ops.scraper.status reports of the last epoch.
    assert.deepEqual(summary.serversPartial, others);
    assert.deepEqual(marker.errors, [
      {
        source: "healthz",
        error:
          `no reply from ${others.join(", ")}, which answered other requests (later than scraper.quiet, ` +
          "or past scraper.timeout): its findings are kept as they were",
      },
    ]);
    // The same when the request some servers miss is VARZ itself.
    const healthz = SOURCES.find((s) => s.name === "healthz")!;
    const varzOfOne = { name: "varz", subject: `$SYS.REQ.SERVER.${server.id}.VARZ`, body: {} };
    const { marker: noVarz } = await scrapeOneEpoch(sys, [varzOfOne, healthz]);
    assert.deepEqual(noVarz.servers_partial, others);
    const { marker: full, summary: fullSummary } = await scrapeOneEpoch(sys, [varz]);
    assert.equal(full.servers_partial, undefined, "every server answered everything");
    assert.deepEqual(fullSummary.serversPartial, []);
  } finally {
    await sys.close();
  }
});
