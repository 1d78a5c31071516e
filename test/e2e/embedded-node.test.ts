import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "@nats-io/transport-node";
import { headers, type NatsConnection } from "@nats-io/nats-core";
import {
  PING_SUBJECT,
  systemSubjects,
  type DiscoveryReply,
  type EpochAnnouncement,
} from "../../src/protocol/index.ts";
import { runNatsmon, spawnNatsmon, type NatsmonProcess } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

const subjects = systemSubjects("local");

/** Sends db.query and returns the reply's body and micro error code, if any. */
async function dbQuery(nc: NatsConnection, body: unknown, accept?: string) {
  const h = headers();
  if (accept) h.set("Accept", accept);
  const reply = await nc.request(subjects.dbQuery, typeof body === "string" ? body : JSON.stringify(body), {
    timeout: 10_000,
    headers: h,
  });
  return {
    code: reply.headers?.get("Nats-Service-Error-Code") || undefined,
    error: reply.headers?.get("Nats-Service-Error") || undefined,
    text: reply.string(),
  };
}

describe("a node on the embedded default", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let node: NatsmonProcess;
  let url: string;
  let nc: NatsConnection;

  before(async () => {
    dir = await tempDir();
    node = spawnNatsmon(["run", "--data-dir", dir.path], {
      NATSMON_SINK_EMBEDDED_PORT: "-1",
      NATSMON_SCRAPER_INTERVAL: "1s",
      NATSMON_DB_QUERY_MAX_ROWS: "50",
      NATSMON_DB_QUERY_TIMEOUT: "500ms",
    });
    url = await node.waitForUrl();
    // No credentials: local clients land in the account natsmon serves in.
    nc = await connect({ servers: url });
  });

  after(async () => {
    await nc?.close();
    await node?.kill("SIGTERM");
    await dir?.[Symbol.asyncDispose]();
  });

  test("tells the operator where its bus is and a query to try, with the command as installed", () => {
    assert.match(
      node.stdout(),
      /^natsmon local is running; its bus listens at nats:\/\/[\d.:]+ \(embedded nats-server\)\.$/m,
    );
    assert.ok(
      node.stdout().includes(`Try, in another terminal:  natsmon query --server ${url} "SELECT server,`),
      node.stdout(),
    );
  });

  test("answers $MON.ping with its node, version, roles and capabilities", async () => {
    const replies: DiscoveryReply[] = [];
    for await (const m of await nc.requestMany(PING_SUBJECT, "", { strategy: "timer", maxWait: 1000 })) {
      replies.push(m.json<DiscoveryReply>());
    }
    assert.equal(replies.length, 1);
    const reply = replies[0]!;
    assert.equal(reply.node_id, "local");
    assert.match(reply.version, /^\d+\.\d+\.\d+/);
    assert.deepEqual(reply.systems, [{ id: "local", roles: ["scrape", "catalog"] }]);
    assert.deepEqual(Object.keys(reply.capabilities).sort(), ["checks", "db", "geo", "realtime", "scraper"]);
    assert.equal((reply.capabilities as { scraper: { interval: number } }).scraper.interval, 1_000_000_000);
  });

  test("is discoverable as the monitor micro service with its node_id", async () => {
    const reply = await nc.request("$SRV.INFO.monitor", "", { timeout: 2000 });
    const info = reply.json<{ name: string; version: string; metadata: Record<string, string> }>();
    assert.equal(info.name, "monitor");
    assert.equal(info.version, "0.0.1");
    assert.equal(info.metadata.node_id, "local");
  });

  test("announces each folded epoch on feed.epoch, and db.query returns that epoch's servers", async () => {
    const sub = nc.subscribe(subjects.feedEpoch, { max: 1 });
    let announcement: EpochAnnouncement | undefined;
    for await (const m of sub) announcement = m.json<EpochAnnouncement>();
    assert.ok(announcement);
    assert.equal(announcement.node_id, "local");
    assert.ok(!Number.isNaN(Date.parse(announcement.epoch)));

    const json = await dbQuery(nc, {
      sql: "SELECT server, version, healthz_status FROM hx.servers WHERE epoch = $1::TIMESTAMPTZ",
      params: [announcement.epoch],
    });
    assert.equal(json.code, undefined, json.error);
    const rows = JSON.parse(json.text) as { server: string; version: string; healthz_status: string }[];
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.server, "natsmon-embedded");
    assert.equal(rows[0]!.healthz_status, "ok");

    const csv = await dbQuery(
      nc,
      {
        sql: "SELECT server, healthz_status FROM hx.servers WHERE epoch = $1::TIMESTAMPTZ",
        params: [announcement.epoch],
      },
      "text/csv",
    );
    assert.equal(csv.code, undefined, csv.error);
    assert.equal(csv.text, "server,healthz_status\r\nnatsmon-embedded,ok\r\n");

    // Monitoring its own bus, natsmon finds its own API service in its own account.
    const services = await dbQuery(nc, {
      sql: "SELECT account, service, endpoints > 0 AS has_endpoints FROM hx.services WHERE epoch = $1::TIMESTAMPTZ",
      params: [announcement.epoch],
    });
    assert.deepEqual(JSON.parse(services.text), [
      { account: "MON", service: "monitor", has_endpoints: true },
    ]);
  });

  test("refuses every statement that is not a single read-only query with 400", async () => {
    const refused = [
      "INSERT INTO hx.epochs SELECT * FROM hx.epochs",
      "CREATE TABLE x (a INTEGER)",
      "COPY hx.epochs TO '/tmp/x.csv'",
      "ATTACH '/tmp/other.duckdb' AS other",
      "SET threads = 1",
      "EXPLAIN SELECT 1",
      "SELECT 1; SELECT 2",
    ];
    for (const sql of refused) {
      const r = await dbQuery(nc, { sql });
      assert.equal(r.code, "400", `${sql} → ${r.code} ${r.error}`);
    }
    assert.equal((await dbQuery(nc, "{not json")).code, "400");
    assert.equal((await dbQuery(nc, { params: [] })).code, "400");
    assert.equal((await dbQuery(nc, { sql: "SELECT * FROM no_such_table" })).code, "400");
  });

  test("rejects a result over db.query-max-rows with 413 and a slow query with 408", async () => {
    const big = await dbQuery(nc, { sql: "SELECT * FROM range(51)" });
    assert.equal(big.code, "413");
    assert.equal((await dbQuery(nc, { sql: "SELECT * FROM range(50)" })).code, undefined);
    const slow = await dbQuery(nc, { sql: "SELECT count(*) FROM range(100000000000) a, range(10) b" });
    assert.equal(slow.code, "408");
    // The interrupted connection keeps serving.
    assert.equal((await dbQuery(nc, { sql: "SELECT 42 AS answer" })).text, '[{"answer":42}]');
  });

  test("answers natsmon query and natsmon systems spawned as processes", async () => {
    const table = await runNatsmon([
      "query",
      "--server",
      url,
      "SELECT count(*) AS n FROM hx.epochs WHERE parts > 0",
    ]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^n\s*\n-+\n\d+\s*\n\(1 row\)\n$/);
    const csv = await runNatsmon(["query", "--server", url, "--format", "csv", "SELECT 1 AS a, 'x,y' AS b"]);
    assert.equal(csv.stdout, 'a,b\r\n1,"x,y"\r\n');
    const bad = await runNatsmon(["query", "--server", url, "DROP TABLE hx.epochs"]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /400/);
    const systems = await runNatsmon(["systems", "--server", url, "--json"]);
    assert.equal((JSON.parse(systems.stdout) as DiscoveryReply[])[0]?.node_id, "local");
  });

  test("stops its embedded nats-server when it stops", async () => {
    const pidFile = `${dir.path}/nats/nats-server.pid`;
    const { readFile } = await import("node:fs/promises");
    const pid = Number(await readFile(pidFile, "utf8"));
    await nc.close();
    await node.kill("SIGTERM");
    await waitFor(
      () => {
        try {
          process.kill(pid, 0);
          return false;
        } catch {
          return true;
        }
      },
      { message: "the embedded nats-server to exit" },
    );
  });
});
