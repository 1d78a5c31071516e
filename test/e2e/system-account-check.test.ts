/**
 * A scrape connection that connects but cannot scrape: a user of an application account
 * (on a real 3-node cluster and on a single server), users of the system account denied
 * $SYS.REQ.> or their reply inbox, and a user moved to another account while natsmon runs
 * (its server restarted so configured). natsmon says so once, with the system, the URL, the
 * user and what to do, commits no epoch through it, keeps running and retrying, and scrapes
 * again once the user is in the system account. A user of an account that imports the
 * system's server requests is scraped as usual.
 */
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { startNatsServer, type NatsServerProcess } from "../../src/bus/index.ts";
import { systemSubjects } from "../../src/protocol/index.ts";
import { callApi, sqlQuery } from "../harness/api-client.ts";
import {
  runNatsmon,
  spawnNatsmon,
  writeMonitorConfig,
  type NatsmonProcess,
} from "../harness/natsmon-process.ts";
import { startTestCluster, type TestCluster } from "../harness/start-nats-cluster.ts";
import { APP_USER, portOf, startTestServer, type TestServer } from "../harness/start-nats-server.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

/** A single server whose system account has users denied the scrape's requests, and an importing account. */
function accountsServerConfig(workDir: string, port: number, monAccount: "SYS" | "APP"): string {
  const mon = "{user: mon, password: mon}";
  return [
    "server_name: single",
    `listen: "127.0.0.1:${port}"`,
    `ports_file_dir: ${JSON.stringify(workDir)}`,
    "accounts {",
    "  SYS: {",
    "    users: [",
    ...(monAccount === "SYS" ? [`      ${mon},`] : []),
    '      {user: noreq, password: noreq, permissions: {publish: {deny: ["$SYS.REQ.>"]}}},',
    '      {user: noinbox, password: noinbox, permissions: {subscribe: {deny: ["_INBOX.>"]}}}',
    "    ]",
    '    exports: [{service: "$SYS.REQ.SERVER.PING.>"}]',
    "  }",
    `  APP: { users: [{user: app, password: app}${monAccount === "APP" ? `, ${mon}` : ""}] }`,
    '  IMP: { users: [{user: imp, password: imp}], imports: [{service: {account: SYS, subject: "$SYS.REQ.SERVER.PING.>"}}] }',
    "}",
    "system_account: SYS",
    "",
  ].join("\n");
}

const status = (bus: NatsConnection, id: string) =>
  callApi(bus, systemSubjects(id).opsScraperStatus).then(() => "ok", String);

/** The node's log lines of one system that match `pattern`. */
const logLines = (node: NatsmonProcess, system: string, pattern: RegExp) =>
  (node.stdout() + node.stderr())
    .split("\n")
    .filter((l) => l.includes(`"system":"${system}"`) && pattern.test(l));

/**
 * How many lines match once at least one has been read: the node writes a line before the state
 * it reports on the bus, but the test reads its stderr pipe and its bus socket independently, so a
 * bus reply can arrive before the line that preceded it.
 */
const logged = async (node: NatsmonProcess, system: string, pattern: RegExp) => {
  await waitFor(() => logLines(node, system, pattern).length > 0, {
    timeoutMs: 10_000,
    message: `a log line of ${system} matching ${pattern}`,
  });
  return logLines(node, system, pattern).length;
};

describe("a scrape connection outside the system account, or denied its requests", () => {
  let cluster: TestCluster;
  let single: NatsServerProcess;
  let sink: TestServer;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let node: NatsmonProcess;
  let bus: NatsConnection;

  before(async () => {
    dir = await tempDir();
    cluster = await startTestCluster({ size: 3 });
    sink = await startTestServer("sink");
    const singleDir = join(dir.path, "single");
    await mkdir(singleDir);
    single = await startNatsServer({
      workDir: singleDir,
      configText: accountsServerConfig(singleDir, -1, "SYS"),
    });
    const system = (id: string, url: string, user: string, password: string) =>
      `  - {id: ${id}, nats: {url: ${JSON.stringify(url)}, user: ${user}, password: ${password}}}`;
    const file = join(dir.path, "natsmon.yaml");
    await writeFile(
      file,
      [
        `node: {id: mon1, data-dir: ${JSON.stringify(join(dir.path, "data"))}}`,
        `sink: {url: ${JSON.stringify(sink.url)}}`,
        "log: {level: debug}",
        "systems:",
        system("app", cluster.urls, APP_USER.user, APP_USER.password),
        system("noreq", single.clientUrl, "noreq", "noreq"),
        system("noinbox", single.clientUrl, "noinbox", "noinbox"),
        system("imports", single.clientUrl, "imp", "imp"),
        "scraper: {interval: 1s}",
      ].join("\n"),
    );
    node = spawnNatsmon(["run", "--config", file]);
    bus = await connect({ servers: sink.url });
  });

  after(async () => {
    await bus?.close();
    await node?.kill("SIGTERM");
    await cluster?.[Symbol.asyncDispose]();
    await single?.stop();
    await sink?.[Symbol.asyncDispose]();
    await dir?.[Symbol.asyncDispose]();
  });

  test("an application account's user: said once, with the system, URL, user and what to do; no epoch", async () => {
    const said = await waitFor(
      async () => {
        const s = await status(bus, "app");
        return s.includes("not in the system account") ? s : undefined;
      },
      { timeoutMs: 90_000, message: "ops.scraper.status of system app naming the account problem" },
    );
    assert.match(said, /^Error: 503 /);
    assert.ok(said.includes(`the monitored system app at ${cluster.urls} (user app)`), said);
    assert.match(said, /\$SYS\.REQ\.SERVER\.PING\.STATSZ got "no responders" from server n\d/);
    assert.match(said, /nats-server 2\.\d+\.\d+/);
    assert.match(said, /use a user of the system account/);
    assert.match(said, /natsmon keeps retrying/);

    // Retried, quietly: the retries are at debug level, the error is logged once.
    await waitFor(() => logLines(node, "app", /still not usable/).length >= 2, {
      timeoutMs: 30_000,
      message: "two retries of system app",
    });
    const errors = logLines(node, "app", /not in the system account/);
    assert.equal(errors.length, 1, errors.join("\n"));
    assert.match(errors[0]!, /"level":50/);
    assert.match(errors[0]!, /"credentials":"user app"/);

    const [row] = await sqlQuery<{ n: number }>(bus, "app", "SELECT count(*) AS n FROM hx.epochs");
    assert.equal(Number(row?.n), 0, "no epoch is committed through a connection outside the system account");

    const systems = await runNatsmon(["systems", "--server", sink.url]);
    const line = systems.stdout.split("\n").find((l) => /\bapp\b/.test(l)) ?? "";
    assert.match(line, /scraper error: cannot scrape: .*not in the system account/);
    assert.equal(node.child.exitCode, null, "the node keeps running");
  });

  test("a system-account user denied $SYS.REQ.> or its reply inbox is told which grant is missing", async () => {
    const noreq = await waitFor(
      async () => {
        const s = await status(bus, "noreq");
        return s.includes("may not") ? s : undefined;
      },
      { timeoutMs: 90_000, message: "the noreq system's reason" },
    );
    assert.match(noreq, /\(user noreq\) may not publish to \$SYS\.REQ\.SERVER\.PING\.STATSZ/);
    assert.match(noreq, /grant the user publish on \$SYS\.REQ\.>/);
    const noinbox = await waitFor(
      async () => {
        const s = await status(bus, "noinbox");
        return s.includes("may not") ? s : undefined;
      },
      { timeoutMs: 90_000, message: "the noinbox system's reason" },
    );
    assert.match(noinbox, /\(user noinbox\) may not subscribe to its reply inbox _INBOX\./);
    assert.match(noinbox, /grant the user subscribe on _INBOX\.>/);
    for (const id of ["noreq", "noinbox"]) {
      assert.equal(await logged(node, id, /"level":50.*may not/), 1, `one error line for ${id}`);
    }
  });

  test("an account that imports the system's server requests is scraped as usual", async () => {
    const rows = await waitFor(
      async () => {
        const r = await sqlQuery<{ answered: string[] }>(
          bus,
          "imports",
          "SELECT servers_answered AS answered FROM hx.epochs",
        ).catch(() => []);
        return r.length > 0 ? r : undefined;
      },
      { timeoutMs: 90_000, message: "an epoch of the importing account's system" },
    );
    assert.deepEqual(rows[0]!.answered, ["single"]);
    assert.equal(await status(bus, "imports"), "ok");
    assert.deepEqual(logLines(node, "imports", /system account|may not/), []);
  });
});

describe("a scrape user moved to another account while natsmon runs", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let serverDir: string;
  let server: NatsServerProcess;
  let node: NatsmonProcess;
  let bus: NatsConnection;

  /** Restarts the server on its port with `mon` in the given account, as a rollout would. */
  const restartWith = async (account: "SYS" | "APP") => {
    const port = portOf(server.clientUrl);
    await server.stop();
    server = await startNatsServer({
      workDir: serverDir,
      configText: accountsServerConfig(serverDir, port, account),
    });
  };
  const epochsSince = async (since: string) => {
    const [row] = await sqlQuery<{ n: number }>(
      bus,
      "moved",
      `SELECT count(*) AS n FROM hx.epochs WHERE epoch > '${since}'::TIMESTAMPTZ`,
    );
    return Number(row?.n ?? 0);
  };

  before(async () => {
    dir = await tempDir();
    serverDir = join(dir.path, "server");
    await mkdir(serverDir);
    server = await startNatsServer({
      workDir: serverDir,
      configText: accountsServerConfig(serverDir, -1, "SYS"),
    });
    const file = await writeMonitorConfig({
      path: join(dir.path, "natsmon.yaml"),
      dataDir: join(dir.path, "data"),
      system: "moved",
      url: server.clientUrl,
      user: { user: "mon", password: "mon" },
      scraper: "interval: 1s",
    });
    node = spawnNatsmon(["run", "--config", file]);
    bus = await connect({ servers: await node.waitForUrl(60_000) });
  });

  after(async () => {
    await bus?.close();
    await node?.kill("SIGTERM");
    await server?.stop();
    await dir?.[Symbol.asyncDispose]();
  });

  test("after the reconnect natsmon stops scraping and says why, and scrapes again once the user is back", async () => {
    await waitFor(async () => (await epochsSince("1970-01-01T00:00:00Z").catch(() => 0)) > 0, {
      timeoutMs: 60_000,
      message: "an epoch while mon is in the system account",
    });

    await restartWith("APP");
    const said = await waitFor(
      async () => {
        const s = await status(bus, "moved");
        return s.includes("not in the system account") ? s : undefined;
      },
      { timeoutMs: 60_000, message: "the scraper's status after the reconnect" },
    );
    assert.match(said, /\(user mon\) is not in the system account/);
    assert.equal(await logged(node, "moved", /not in the system account/), 1);
    // Nothing is committed through the connection from then on.
    const stoppedAt = new Date().toISOString();
    const quiet = () => logLines(node, "moved", /no epoch has come from the scraper/).length;
    const quietBefore = quiet();
    await waitFor(() => quiet() > quietBefore, {
      timeoutMs: 60_000,
      message: "the catalog noticing that no epoch comes",
    });
    assert.equal(await epochsSince(stoppedAt), 0);

    await restartWith("SYS");
    const back = new Date().toISOString();
    await waitFor(async () => (await epochsSince(back)) > 0, {
      timeoutMs: 90_000,
      message: "epochs again once mon is back in the system account",
    });
    assert.equal(await logged(node, "moved", /works through the system account now/), 1);
    assert.equal(await status(bus, "moved"), "ok");
  });
});
