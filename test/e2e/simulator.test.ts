import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import { systemSubjects } from "../../src/protocol/index.ts";
import { startTestServer } from "../harness/start-nats-server.ts";
import { spawnNatsmon } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

test("natsmon simulate --profile small is scraped and folded like a 3-server system with 100 streams", async () => {
  await using bus = await startTestServer("simbus");
  await using dir = await tempDir();
  await using sim = spawnNatsmon(["simulate", "--profile", "small", "--server", bus.url]);
  await waitFor(() => sim.stdout().includes("simulating small"), { message: "the simulator to start" });
  const config = join(dir.path, "natsmon.yaml");
  await writeFile(
    config,
    [
      `node: {data-dir: ${JSON.stringify(join(dir.path, "data"))}}`,
      "sink: {embedded: {port: -1}}",
      `system: {id: sim, nats: {url: ${JSON.stringify(bus.url)}}}`,
      "scraper: {interval: 1s}",
    ].join("\n"),
  );
  await using node = spawnNatsmon(["run", "--config", config]);
  const nc = await connect({ servers: await node.waitForUrl() });
  const query = async <T>(sql: string) =>
    (await nc.request(systemSubjects("sim").dbQuery, JSON.stringify({ sql }), { timeout: 10_000 })).json<
      T[]
    >();
  try {
    const epochs = await waitFor(
      async () => {
        // On a loaded machine a simulated server can answer after the quiet window: the epoch
        // records it as expected-but-missing when it answered nothing, and as partial
        // (servers_partial, with an error) when it answered some requests and not others, its
        // CONNZ say, whose rows the epoch then lacks. Counted on an epoch every server
        // answered in full.
        const rows = await query<{ epoch: string }>(
          "SELECT epoch FROM hx.epochs WHERE len(servers_answered) = len(servers_expected) AND len(servers_partial) = 0 ORDER BY epoch",
        );
        return rows.length >= 2 ? rows : undefined;
      },
      { message: "two simulated epochs that every server answered in full" },
    );
    const last = epochs.at(-1)!.epoch;
    const at = `WHERE epoch = '${last}'::TIMESTAMPTZ`;
    assert.deepEqual(await query(`SELECT count(*)::INTEGER AS n FROM hx.servers ${at}`), [{ n: 3 }]);
    assert.deepEqual(await query(`SELECT count(*)::INTEGER AS n FROM hx.streams ${at}`), [{ n: 100 }]);
    assert.deepEqual(await query(`SELECT count(*)::INTEGER AS n FROM hx.consumers ${at}`), [{ n: 300 }]);
    // The bus's own server answers CONNZ too, scoped to the asking account: its rows are the
    // simulator's and natsmon's own connections.
    assert.deepEqual(
      await query(`SELECT count(*)::INTEGER AS n FROM hx.connections ${at} AND server <> 'simbus'`),
      [{ n: 500 }],
    );
    // One cluster of 3: each server routes to the 2 others.
    assert.deepEqual(await query(`SELECT count(*)::INTEGER AS n FROM hx.routes ${at}`), [{ n: 6 }]);
    assert.deepEqual(await query(`SELECT count(*)::INTEGER AS n FROM hx.subscription_stats ${at}`), [
      { n: 3 },
    ]);
    // 3 accounts with connections on each of the 3 servers, and SYS from its ACCOUNTZ detail
    // on the one server asked for it.
    assert.deepEqual(
      await query(
        `SELECT count(DISTINCT account)::INTEGER AS a, count(*)::INTEGER AS n FROM hx.accounts ${at} AND server <> 'simbus'`,
      ),
      [{ a: 4, n: 10 }],
    );
    // Each ACC<n> exports events.acc<n>.> and imports the export of the account before it;
    // each account's detail is asked of one of the servers that list it.
    assert.deepEqual(
      await query(
        `SELECT account, subject, servers, importers FROM hx.account_exports ${at} ORDER BY account`,
      ),
      [
        { account: "ACC1", subject: "events.acc1.>", servers: 1, importers: 1 },
        { account: "ACC2", subject: "events.acc2.>", servers: 1, importers: 1 },
        { account: "ACC3", subject: "events.acc3.>", servers: 1, importers: 0 },
      ],
    );
    assert.deepEqual(
      await query(
        `SELECT account, exporter, export_found, inactive_servers FROM hx.account_imports ${at} ORDER BY account`,
      ),
      [
        { account: "ACC2", exporter: "ACC1", export_found: true, inactive_servers: [] },
        { account: "ACC3", exporter: "ACC2", export_found: true, inactive_servers: [] },
      ],
    );
    const replicas = await query<{ n: number; expected: number }>(
      `SELECT (SELECT count(*) FROM hx.stream_replicas ${at})::INTEGER AS n,
              (SELECT sum(replicas) FROM hx.streams ${at})::INTEGER AS expected`,
    );
    assert.equal(replicas[0]!.n, replicas[0]!.expected);
    const [problems] = await query<{ errors: string[] }>(`SELECT errors FROM hx.epochs ${at}`);
    assert.deepEqual(problems!.errors, []);
    // The bus's own server answers only CONNZ and account statistics, for the asking
    // account, and no per-server request: it is never asked again as a missing server.
    const asks = (node.stdout() + node.stderr())
      .split("\n")
      .filter((l) => l.includes("asking each directly"));
    assert.deepEqual(
      asks.filter((l) => l.includes(": simbus")),
      [],
    );
    // Values move between epochs like a live system.
    const moved = await query<{ n: number }>(
      "SELECT count(DISTINCT in_msgs)::INTEGER AS n FROM hx.servers WHERE server = 's001'",
    );
    assert.ok(moved[0]!.n >= 2);
  } finally {
    await nc.close();
  }
});
