/**
 * Authorization by subject permissions (spec: Authentication items 1 and 4) on a real
 * nats-server with accounts and per-user permissions as the sink. natsmon itself runs as a
 * user holding exactly the grants the README lists; an operator gives one user the finding
 * feed only, another every system's db with exactly the README's grants (streamed queries
 * and backups included: their acks go to a subject under the same grant).
 */
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { startNatsServer, type NatsServerProcess } from "../../src/bus/index.ts";
import {
  nodeSubjects,
  systemSubjects,
  type FindingTransition,
  type PprofReply,
} from "../../src/protocol/index.ts";
import { readArrowStream } from "../../src/cli/stream-client.ts";
import { callApi, sqlQuery } from "../harness/api-client.ts";
import { runNatsmon, spawnNatsmon, type NatsmonProcess } from "../harness/natsmon-process.ts";
import { readProfile } from "../harness/profile.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

const S = systemSubjects("prod");

/**
 * The grants the README lists for natsmon's own user on a restricted sink, for node `guarded`
 * serving system `prod`. Subject wildcards match whole tokens only, so the KV buckets are named.
 */
const NATSMON_GRANTS = {
  publish: [
    "$MON.>",
    "$JS.API.>",
    "$JS.ACK.>",
    "$JS.FC.>",
    "$KV.MON_FINDINGS_prod.>",
    "$KV.MON_NOTIFIED_prod.>",
    "$KV.MON_CLAIMS.>",
    "$O.MON_PPROF.>",
    "_INBOX.>",
    "$SRV.>",
  ],
  subscribe: ["$MON.>", "_INBOX.>", "$SRV.>"],
};

/** The README's "database access to every system" grants (README: Authorization). */
const DB_USER_GRANTS = { publish: ["$MON.sys.*.db.>", "$MON.ping"], subscribe: ["_INBOX.>"] };

/** A streamed result of about 20 MB: some 20 chunks of about 1 MiB, more than any window. */
const BIG_SQL = "SELECT i, repeat('x', 200) AS s FROM range(100000) t(i)";

/** A user that may send a streamed query but not its acks, and one that may send neither. */
const STREAMER_GRANTS = { publish: ["$MON.sys.*.db.query.stream"], subscribe: ["_INBOX.>"] };
const OUTSIDER_GRANTS = { publish: ["$MON.ping"], subscribe: ["_INBOX.>"] };

const list = (subjects: readonly string[]) => `[${subjects.map((s) => JSON.stringify(s)).join(", ")}]`;

/** A user of the MON account with publish and subscribe allow lists (password = user name). */
const userEntry = (user: string, grants: { publish: readonly string[]; subscribe: readonly string[] }) =>
  `      {user: ${user}, password: ${user}, permissions: {publish: {allow: ${list(grants.publish)}}, subscribe: {allow: ${list(grants.subscribe)}}}}`;

function serverConfig(workDir: string): string {
  return [
    "server_name: guarded",
    "listen: 127.0.0.1:-1",
    `ports_file_dir: ${JSON.stringify(workDir)}`,
    `jetstream { store_dir: ${JSON.stringify(join(workDir, "js"))} }`,
    "accounts {",
    "  SYS: { users: [{user: sys, password: sys}] }",
    "  MON: {",
    "    jetstream: enabled",
    "    users: [",
    `      {user: natsmon, password: natsmon, permissions: {publish: {allow: ${list(NATSMON_GRANTS.publish)}}, subscribe: {allow: ${list(NATSMON_GRANTS.subscribe)}}}}`,
    `      {user: feed, password: feed, permissions: {publish: {deny: [">"]}, subscribe: {allow: ["$MON.sys.prod.feed.finding.>"]}}}`,
    userEntry("analyst", DB_USER_GRANTS),
    userEntry("streamer", STREAMER_GRANTS),
    userEntry("outsider", OUTSIDER_GRANTS),
    "      {user: app, password: app}",
    "    ]",
    "  }",
    "}",
    "system_account: SYS",
    "",
  ].join("\n");
}

describe("subject permissions on the sink", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let server: NatsServerProcess;
  let node: NatsmonProcess;
  let analyst: NatsConnection;
  let feed: NatsConnection;
  const received: FindingTransition[] = [];

  before(async () => {
    dir = await tempDir();
    const workDir = join(dir.path, "nats");
    server = await startNatsServer({ workDir, configText: serverConfig(workDir) });
    const config = join(dir.path, "natsmon.yaml");
    await writeFile(
      config,
      [
        `node: {id: guarded, data-dir: ${JSON.stringify(join(dir.path, "data"))}}`,
        `sink: {url: ${JSON.stringify(server.clientUrl)}, user: natsmon, password: natsmon}`,
        "system:",
        "  id: prod",
        `  nats: {url: ${JSON.stringify(server.clientUrl)}, user: sys, password: sys}`,
        "scraper: {interval: 1s}",
        // Window 1: every chunk after the schema waits for an ack, so even a backup of a few
        // epochs' small tables needs the client's acks to get through.
        "db: {query-stream: {window: 1}}",
        "notifications:",
        '  webhook: [{name: hook, url: "http://127.0.0.1:9/never", enabled: false, subscriptions: ["*"]}]',
      ].join("\n"),
    );
    node = spawnNatsmon(["run", "--config", config]);
    await node.waitForUrl();
    analyst = await connect({ servers: server.clientUrl, user: "analyst", pass: "analyst" });
    feed = await connect({ servers: server.clientUrl, user: "feed", pass: "feed" });
    const sub = feed.subscribe(S.feedFindingAll);
    void (async () => {
      for await (const m of sub) received.push(m.json<FindingTransition>());
    })();
    await waitFor(
      async () =>
        (await sqlQuery<{ n: number }>(analyst, "prod", "SELECT count(*) AS n FROM hx.check_runs"))[0]!.n >=
        2,
      { timeoutMs: 30_000, message: "natsmon indexing and checking with only its listed grants" },
    );
  });

  after(async () => {
    await analyst?.close();
    await feed?.close();
    await node?.kill("SIGTERM");
    await server?.[Symbol.asyncDispose]();
    await dir?.[Symbol.asyncDispose]();
  });

  test("natsmon runs with only the grants the README lists: its streams, buckets (role claims too) and delivery log exist", async () => {
    const app = await connect({ servers: server.clientUrl, user: "app", pass: "app" });
    try {
      const names: string[] = [];
      for await (const name of (await jetstreamManager(app)).streams.names()) names.push(name);
      for (const name of [
        "MON_SCRAPE_prod",
        "KV_MON_FINDINGS_prod",
        "MON_OUTBOX_guarded",
        "KV_MON_NOTIFIED_prod",
        "webhook-deliveries_guarded",
        "KV_MON_CLAIMS",
      ]) {
        assert.ok(names.includes(name), `${name} in ${names.join(", ")}`);
      }
    } finally {
      await app.close();
    }
  });

  test("with the README's grants, a heap snapshot too large for the sink's max_payload goes to MON_PPROF", async () => {
    const app = await connect({ servers: server.clientUrl, user: "app", pass: "app" });
    try {
      const heap = await callApi<PprofReply>(
        app,
        nodeSubjects("guarded").opsPprof,
        { type: "heap" },
        120_000,
      );
      assert.equal(heap.object?.bucket, "MON_PPROF");
      assert.ok(
        (await readProfile<{ snapshot: { node_count: number } }>(app, heap)).snapshot.node_count > 1000,
      );
    } finally {
      await app.close();
    }
  });

  test("a user allowed only the finding feed receives transitions and is refused a db.query", async () => {
    // A stream at its message limit fires jetstream-003 once the baseline exists.
    const app = await connect({ servers: server.clientUrl, user: "app", pass: "app" });
    try {
      await (await jetstreamManager(app)).streams.add({ name: "FULL", subjects: ["full.>"], max_msgs: 10 });
      const js = jetstream(app);
      for (let i = 0; i < 10; i++) await js.publish(`full.${i}`, "x");
    } finally {
      await app.close();
    }
    const fired = await waitFor(() => received.find((t) => t.code === "jetstream-003"), {
      timeoutMs: 30_000,
      message: "jetstream-003 on the feed user's subscription",
    });
    assert.equal(fired.status, "firing");
    await assert.rejects(
      feed.request(S.dbQuery, JSON.stringify({ sql: "SELECT 1" }), { timeout: 2_000 }),
      /permission|timeout/i,
    );
  });

  test("a user granted every system's db queries, and cannot toggle the scraper", async () => {
    const rows = await sqlQuery<{ n: number }>(analyst, "prod", "SELECT count(*) AS n FROM hx.epochs");
    assert.ok(rows[0]!.n >= 2);
    await assert.rejects(callApi(analyst, S.opsScraperToggle, { paused: true }), /permission|timeout/i);
  });

  test("a user with exactly the README's database grants runs a streamed query many windows long", async () => {
    const out = join(dir.path, "big.csv");
    const run = await runNatsmon(["query", ...analystArgs(), "--format", "csv", "--out", out, BIG_SQL]);
    assert.equal(run.code, 0, run.stderr);
    assert.doesNotMatch(run.stderr, /comes from db\.query/, "streamed, not the db.query fallback");
    const lines = (await readFile(out, "utf8")).trimEnd().split("\n");
    assert.equal(lines.length, 100_001);
    assert.equal(lines[100_000], `99999,${"x".repeat(200)}`);
    assert.doesNotMatch(nodeLog(), /stopped acknowledging/);
  });

  test("a user with exactly the README's database grants backs a system up", async () => {
    const out = join(dir.path, "prod-backup.duckdb");
    const run = await runNatsmon(["backup", ...analystArgs(), "--out", out]);
    assert.equal(run.code, 0, run.stderr);
    const db = await DuckDBInstance.create(out, { access_mode: "READ_ONLY" });
    const conn = await db.connect();
    try {
      const epochs = (
        await conn.runAndReadAll("SELECT count(*)::INTEGER AS n FROM hx.epochs")
      ).getRowObjects();
      assert.ok((epochs[0]!.n as number) >= 2, JSON.stringify(epochs));
      assert.doesNotMatch(nodeLog(), /stopped acknowledging/);
    } finally {
      conn.closeSync();
      db.closeSync();
    }
  });

  test("a refused publish of another subject on the same connection leaves a stream running", async () => {
    const reader = await readArrowStream(analyst, S.dbQueryStream, { sql: BIG_SQL }, { timeoutMs: 30_000 });
    let rows = 0;
    for await (const batch of reader) {
      // Refused (analyst may not publish outside the db space); the stream is not its business.
      if (rows === 0) analyst.publish(S.opsScraperToggle, JSON.stringify({ paused: true }));
      rows += batch.numRows;
    }
    assert.equal(rows, 100_000);
    assert.equal(reader.totals?.rows, 100_000);
  });

  /** What the node logged so far: a stream whose acks never came is logged as "stopped acknowledging". */
  function nodeLog(): string {
    return node.stdout() + node.stderr();
  }

  function analystArgs(): string[] {
    return ["--server", server.clientUrl, "--user", "analyst", "--password", "analyst", "--system", "prod"];
  }

  test("a user refused its acks, or the request itself, is told which grant is missing instead of a 408 or a timeout", async () => {
    const cases: [string, RegExp][] = [
      // Without the grant, the server would end the stream with its 408 after the ack timeout.
      [
        "streamer",
        /^natsmon: the bus refused this user permission to publish to \$MON\.sys\.prod\.db\.stream-ack\.\S+: grant publish on \$MON\.sys\.prod\.db\.> \(README, Authorization\)$/m,
      ],
      // Without the grant, the request never arrives and only --timeout would end the wait.
      [
        "outsider",
        /^natsmon: the bus refused this user permission to publish to \$MON\.sys\.prod\.db\.query\.stream: grant publish on \$MON\.sys\.prod\.db\.> \(README, Authorization\)$/m,
      ],
    ];
    for (const [user, message] of cases) {
      const run = await runNatsmon([
        "query",
        ...["--server", server.clientUrl, "--user", user, "--password", user, "--system", "prod"],
        ...["--timeout", "120000", "--format", "csv", BIG_SQL],
      ]);
      assert.equal(run.code, 1, `${user}: ${run.stderr}`);
      assert.match(run.stderr, message, user);
      assert.doesNotMatch(run.stderr, /408|no message from the stream/, user);
    }
  });
});
