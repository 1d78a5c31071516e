import { test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { systemSubjects, type ScraperStatusReply, type SinkInfoReply } from "../../src/protocol/index.ts";
import { spawnNatsmon } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";
import { callApi } from "../harness/api-client.ts";

const subjects = systemSubjects("local");

const call = callApi;

const epochCount = async (nc: NatsConnection) =>
  (
    await call<{ n: number }[]>(nc, subjects.dbQuery, { sql: "SELECT count(*)::INTEGER AS n FROM hx.epochs" })
  )[0]!.n;

test("the scraper's ops endpoints report, pause, resume and trigger scrapes, and describe the sink", async () => {
  await using dir = await tempDir();
  await using node = spawnNatsmon(["run", "--data-dir", dir.path], {
    NATSMON_SINK_EMBEDDED_PORT: "-1",
    NATSMON_SCRAPER_INTERVAL: "300ms",
  });
  const nc = await connect({ servers: await node.waitForUrl() });
  try {
    const status = await waitFor(async () => {
      const s = await call<ScraperStatusReply>(nc, subjects.opsScraperStatus);
      return s.last_epoch ? s : undefined;
    });
    assert.equal(status.state, "running");
    assert.equal(status.interval, 300_000_000);
    assert.deepEqual(status.last_epoch?.servers_answered, ["natsmon-embedded"]);
    assert.deepEqual(status.last_epoch.servers_partial, []);
    assert.deepEqual(status.last_epoch.servers_unheard_since, {});
    const sources = new Map(status.last_epoch.sources.map((s) => [s.source, s]));
    for (const name of [
      "varz",
      "statsz",
      "jsz",
      "healthz",
      "healthz_server",
      "connz",
      "routez",
      "subsz",
      "accountz",
      "accstatz",
    ]) {
      const source = sources.get(name);
      assert.ok(source && source.servers === 1 && source.bytes > 0, `${name}: ${JSON.stringify(source)}`);
    }
    // A request newer than the server is reported unsupported, not failed (IDZ needs 2.10).
    for (const source of sources.values())
      assert.ok(!source.unsupported || source.servers === 0, source.source);

    const paused = await call<ScraperStatusReply>(nc, subjects.opsScraperToggle, { paused: true });
    assert.equal(paused.state, "paused");
    // Let anything in flight land: the scrape under way when the pause came commits its
    // marker, and the catalog folds up to that last marker. Then nothing more may arrive.
    const lastCommit = await waitFor(async () => {
      const a = (await call<ScraperStatusReply>(nc, subjects.opsScraperStatus)).last_epoch!.commit_seq;
      await new Promise((r) => setTimeout(r, 1000));
      const b = (await call<ScraperStatusReply>(nc, subjects.opsScraperStatus)).last_epoch!.commit_seq;
      return a === b ? b : undefined;
    });
    const settled = await waitFor(async () => {
      const [row] = await call<{ seq: number; n: number }[]>(nc, subjects.dbQuery, {
        sql: "SELECT max(marker_seq)::BIGINT AS seq, count(*)::INTEGER AS n FROM hx.epochs",
      });
      return row && row.seq === lastCommit ? row.n : undefined;
    });
    const before = (await call<ScraperStatusReply>(nc, subjects.opsScraperStatus)).last_epoch!.commit_seq;
    const triggered = await call<ScraperStatusReply>(nc, subjects.opsScraperTrigger);
    assert.equal(triggered.state, "paused");
    assert.ok(triggered.last_epoch!.commit_seq > before, "the trigger committed a new epoch");
    await waitFor(async () => (await epochCount(nc)) === settled + 1, {
      message: "the triggered epoch to fold",
    });
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(await epochCount(nc), settled + 1, "only the triggered epoch while paused");

    const resumed = await call<ScraperStatusReply>(nc, subjects.opsScraperToggle, {});
    assert.equal(resumed.state, "running");
    await waitFor(async () => (await epochCount(nc)) > settled + 2, { message: "scrapes to resume" });

    const bad = await nc.request(subjects.opsScraperToggle, JSON.stringify({ paused: "yes" }), {
      timeout: 2000,
    });
    assert.equal(bad.headers?.get("Nats-Service-Error-Code"), "400");

    const sink = await call<SinkInfoReply>(nc, subjects.opsSinkInfo);
    assert.equal(sink.stream, "MON_SCRAPE_local");
    assert.deepEqual(sink.subjects, [subjects.scrapeAll]);
    assert.equal(sink.replicas, 1);
    assert.equal(sink.storage, "file");
    assert.ok(sink.state.messages > 0);
    assert.match(sink.server_version, /^\d+\.\d+\.\d+/);
    assert.equal(sources.get("idz")?.unsupported, sink.server_version.startsWith("2.9."));
  } finally {
    await nc.close();
  }
});

test("ops.diagnostics proxies to a named server and names the version a 2.9 server lacks", async () => {
  await using dir = await tempDir();
  await using node = spawnNatsmon(["run", "--data-dir", dir.path], {
    NATSMON_SINK_EMBEDDED_PORT: "-1",
    NATSMON_SCRAPER_INTERVAL: "1h",
  });
  const nc = await connect({ servers: await node.waitForUrl() });
  try {
    const failure = (subject: string, body: unknown) =>
      call(nc, subject, body).then(
        () => assert.fail(`${subject} ${JSON.stringify(body)} should have failed`),
        (err: Error) => err.message,
      );
    // The embedded sink is Debian's nats-server 2.9.10, which has neither request.
    assert.equal(
      await failure(subjects.opsProfilez, { server: "natsmon-embedded", name: "heap" }),
      "501 server natsmon-embedded runs nats-server 2.9.10; PROFILEZ needs nats-server 2.10.0 or newer",
    );
    assert.equal(
      await failure(subjects.opsExpvarz, { server: "natsmon-embedded" }),
      "501 server natsmon-embedded runs nats-server 2.9.10; EXPVARZ needs nats-server 2.10.16 or newer",
    );
    // 2.9 filters server names by substring: "natsmon" alone must not pick natsmon-embedded.
    assert.equal(
      await failure(subjects.opsExpvarz, { server: "natsmon" }),
      "404 no server named natsmon answered in system local (servers: natsmon-embedded)",
    );
    assert.match(await failure(subjects.opsExpvarz, {}), /^400 server is required/);
    assert.match(
      await failure(subjects.opsProfilez, { server: "x", name: "bogus" }),
      /^400 name must be one of/,
    );
    assert.match(
      await failure(subjects.opsProfilez, { server: "x", name: "cpu" }),
      /^400 a cpu profile needs/,
    );
  } finally {
    await nc.close();
  }
});
