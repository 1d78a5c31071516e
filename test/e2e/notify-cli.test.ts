/**
 * The notification commands against a real node: a real server stops requiring
 * authentication (a config reload), server-007 fires, the node delivers it to a real HTTP
 * receiver; `natsmon deliveries log` shows the attempt, `natsmon deliveries replay` re-sends
 * the same bytes, and `natsmon notify test` reaches the endpoint or says why not.
 */
import assert from "node:assert/strict";
import { createHash, createHmac } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import type { NatsServerProcess } from "../../src/bus/index.ts";
import { MONITOR, startAuthToggleServer } from "../harness/auth-toggle-server.ts";
import type { DeliveryLogEntry, WebhookMessage } from "../../src/protocol/index.ts";
import { sqlQuery } from "../harness/api-client.ts";
import { startHttpReceiver, type HttpReceiver, type ReceivedRequest } from "../harness/http-receiver.ts";
import { runNatsmon, spawnNatsmon, type NatsmonProcess } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

const SECRET = "s3cret";

const signed = (req: ReceivedRequest) =>
  req.headers["x-hub-signature-256"] ===
  `sha256=${createHmac("sha256", SECRET).update(req.body).digest("hex")}`;

describe("natsmon notify and deliveries commands", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let server: NatsServerProcess;
  let node: NatsmonProcess;
  let nc: NatsConnection;
  let receiver: HttpReceiver;
  let config: string;
  let url: string;
  let delivered: ReceivedRequest;
  let setAuth: (auth: boolean) => Promise<void>;

  before(async () => {
    dir = await tempDir();
    receiver = await startHttpReceiver();
    receiver.respondWith((req) => ({ status: req.path === "/broken" ? 500 : 200, body: "nope" }));
    const workDir = join(dir.path, "open1");
    const toggle = await startAuthToggleServer(workDir);
    server = toggle.server;
    setAuth = toggle.setAuth;
    config = join(dir.path, "natsmon.yaml");
    await writeFile(
      config,
      [
        `node: {id: mon, data-dir: ${JSON.stringify(join(dir.path, "data"))}}`,
        "sink: {embedded: {port: -1}}",
        "system:",
        "  id: open",
        `  nats: {url: ${JSON.stringify(server.clientUrl)}, user: ${MONITOR.user}, password: ${MONITOR.password}}`,
        "scraper: {interval: 1s}",
        "notifications:",
        "  webhook:",
        `    - {name: hook, url: ${JSON.stringify(`${receiver.url}/hook`)}, auth-type: hmac, auth-token: ${SECRET}, subscriptions: ["server-*"]}`,
        `    - {name: broken, enabled: false, url: ${JSON.stringify(`${receiver.url}/broken`)}, subscriptions: ["*"]}`,
      ].join("\n"),
    );
    node = spawnNatsmon(["run", "--config", config]);
    url = await node.waitForUrl();
    nc = await connect({ servers: url });
    await waitFor(
      async () =>
        (await sqlQuery<{ n: number }>(nc, "open", "SELECT count(*) AS n FROM hx.check_runs"))[0]!.n >= 2,
      { timeoutMs: 30_000, message: "two checked epochs" },
    );
    await setAuth(false);
    delivered = await waitFor(
      () =>
        receiver.requests.find(
          (r) =>
            r.path === "/hook" &&
            (r.json() as WebhookMessage).alerts.some((a) => a.labels.alertname === "server-007"),
        ),
      { timeoutMs: 30_000, message: "server-007 delivered to the webhook" },
    );
  });

  after(async () => {
    await nc?.close();
    await node?.kill("SIGTERM");
    server?.kill("SIGTERM");
    await receiver?.[Symbol.asyncDispose]();
    await dir?.[Symbol.asyncDispose]();
  });

  test("the node signed the delivery of a real fault", () => {
    assert.ok(signed(delivered));
  });

  test("deliveries log shows the attempt, as a table and as JSON", async () => {
    const table = await runNatsmon(["deliveries", "log", "--server", url, "--endpoint", "hook"]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /hook\s+change\s+1\s+ok\s+\d+\s+\d+\s+sha256:[0-9a-f]{12}\s+200\n/);
    const json = await runNatsmon(["deliveries", "log", "--server", url, "--json"]);
    assert.equal(json.code, 0, json.stderr);
    const entries = json.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as DeliveryLogEntry);
    const digest = `sha256:${createHash("sha256").update(delivered.body).digest("hex")}`;
    const entry = entries.find((e) => e.body_digest === digest);
    assert.ok(entry, "the delivery the receiver got is logged with its digest");
    assert.equal(entry.status_code, 200);
    assert.equal(entry.body, delivered.body.toString("utf8"));
    const misnamed = await runNatsmon(["deliveries", "log", "--server", url, "--endpoint", "nosuch"]);
    assert.equal(misnamed.code, 1);
    assert.equal(misnamed.stdout, "");
    assert.match(
      misnamed.stderr,
      /^natsmon: the delivery log of node "mon" has no delivery to an endpoint named "nosuch"; it has deliveries to: hook\n$/,
    );
    const elsewhere = await runNatsmon(["deliveries", "log", "--server", url, "--node", "nosuch"]);
    assert.equal(elsewhere.code, 1);
    assert.match(
      elsewhere.stderr,
      /^natsmon: node "nosuch" keeps no delivery log on this bus \(no stream \S+\): it has no notification endpoints/,
    );
  });

  test("deliveries replay re-sends the logged bytes, signed again", async () => {
    const from = receiver.requests.length;
    const replay = await runNatsmon([
      "deliveries",
      "replay",
      "--endpoint",
      "hook",
      "--config",
      config,
      "--server",
      url,
    ]);
    assert.equal(replay.code, 0, replay.stderr);
    assert.match(replay.stdout, /replayed \d+ of \d+ logged deliveries to hook/);
    const again = receiver.requests.slice(from).find((r) => r.body.equals(delivered.body));
    assert.ok(again, "the same body bytes arrived again");
    assert.ok(signed(again));
    const log = await runNatsmon(["deliveries", "log", "--server", url, "--endpoint", "hook", "--json"]);
    assert.ok(
      log.stdout.split("\n").some((l) => l.includes('"kind":"replay"')),
      "the replay is logged too",
    );
  });

  test("notify test reaches the endpoint with a signed test alert, and logs it as kind test", async () => {
    const from = receiver.requests.length;
    const result = await runNatsmon(["notify", "test", "hook", "--config", config, "--server", url]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, "", "nothing to say: the test is logged");
    assert.match(
      result.stdout,
      /webhook endpoint hook at .*\/hook: HTTP 200 in \d+ ms: test alert delivered/,
    );
    const req = receiver.requests.slice(from).find((r) => r.path === "/hook");
    assert.ok(req && signed(req));
    const body = req.json() as WebhookMessage;
    assert.equal(body.alerts[0]!.labels.alertname, "natsmon-test");
    assert.equal(body.alerts[0]!.labels.system, "open");
    const log = await runNatsmon(["deliveries", "log", "--server", url, "--endpoint", "hook", "--json"]);
    const logged = log.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as DeliveryLogEntry)
      .find((e) => e.kind === "test");
    assert.ok(logged, "the test delivery is on the node's delivery log");
    assert.equal(logged.body_digest, `sha256:${createHash("sha256").update(req.body).digest("hex")}`);
    assert.equal(logged.outcome, "ok");
    assert.equal(logged.status_code, 200);
  });

  test("notify test and replay reach the node's embedded bus at the port its configuration names", async () => {
    // The same configuration with the port the embedded server took written in, as a
    // deployment with a fixed port has it: no --server needed.
    const fixed = join(dir.path, "fixed-port.yaml");
    const text = await readFile(config, "utf8");
    await writeFile(
      fixed,
      text.replace("sink: {embedded: {port: -1}}", `sink: {embedded: {port: ${new URL(url).port}}}`),
    );
    const result = await runNatsmon(["notify", "test", "hook", "--config", fixed], {
      NATS_URL: "nats://127.0.0.1:1",
    });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, "", "the test is logged on the node's own bus");
    const replay = await runNatsmon(
      ["deliveries", "replay", "--config", fixed, "--endpoint", "hook", "--since", "1h"],
      { NATS_URL: "nats://127.0.0.1:1" },
    );
    assert.equal(replay.code, 0, replay.stderr);
    assert.match(replay.stdout, /replayed \d+ of \d+ logged deliveries to hook/);
  });

  test("notify test still sends when it cannot write the delivery log, and says so", async () => {
    const from = receiver.requests.length;
    // Nothing listens on port 1: the node's bus cannot be reached.
    const result = await runNatsmon([
      "notify",
      "test",
      "hook",
      "--config",
      config,
      "--server",
      "nats://127.0.0.1:1",
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /test alert delivered/);
    assert.match(result.stderr, /the test is not written to the delivery log of node mon: cannot connect/);
    assert.ok(receiver.requests.slice(from).some((r) => r.path === "/hook"));
  });

  test("notify test says so when the bus has no delivery log stream", async () => {
    // The monitored server has JetStream but not the node's log stream.
    const result = await runNatsmon([
      "notify",
      "test",
      "hook",
      "--config",
      config,
      "--server",
      server.clientUrl,
      "--user",
      MONITOR.user,
      "--password",
      MONITOR.password,
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /test alert delivered/);
    assert.match(
      result.stderr,
      /the test is not written to the delivery log of node mon: no stream on this bus takes \$MON\.node\.mon\.[^ ]+: node mon's delivery log stream webhook-deliveries_mon is missing/,
    );
  });

  test("notify test says why an endpoint failed, and exits 1", async () => {
    const result = await runNatsmon(["notify", "test", "broken", "--config", config, "--server", url]);
    assert.equal(result.code, 1);
    assert.match(result.stdout, /endpoint broken is disabled; testing it anyway/);
    assert.match(result.stderr, /HTTP 500: nope/);
    const table = await runNatsmon(["deliveries", "log", "--server", url, "--endpoint", "broken"]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /broken\s+test\s+1\s+retry\s+\d+\s+1\s+sha256:[0-9a-f]{12}\s+500 nope\n/);
  });

  test("deliveries replay leaves test alerts out unless --kind names them", async () => {
    // The endpoint's only logged deliveries are the test alerts above.
    const replay = await runNatsmon([
      "deliveries",
      "replay",
      "--endpoint",
      "broken",
      "--config",
      config,
      "--server",
      url,
    ]);
    assert.equal(replay.code, 0, replay.stderr);
    assert.match(
      replay.stdout,
      /^replayed 0 of 0 logged deliveries to broken; not replayed: \d+ test \(--kind to include them\)\n$/,
    );
    const tests = await runNatsmon(["deliveries", "log", "--server", url, "--kind", "test", "--json"]);
    assert.equal(tests.code, 0, tests.stderr);
    const kinds = tests.stdout
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as DeliveryLogEntry).kind);
    assert.ok(kinds.length > 0);
    assert.deepEqual([...new Set(kinds)], ["test"]);
    const bad = await runNatsmon(["deliveries", "replay", "--endpoint", "broken", "--kind", "change,tests"]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--kind: "tests" is not a delivery kind \(change, resend, test, replay\)/);
  });

  test("deliveries replay to a failing endpoint names its answer once per line, and exits 1", async () => {
    // The failed test above is on the log: replaying it fails the same way.
    const replay = await runNatsmon([
      "deliveries",
      "replay",
      "--endpoint",
      "broken",
      "--kind",
      "test",
      "--config",
      config,
      "--server",
      url,
    ]);
    assert.equal(replay.code, 1);
    assert.match(replay.stdout, /alert\(s\) sha256:[0-9a-f]+: HTTP 500: nope\n/);
    assert.doesNotMatch(replay.stdout, /HTTP 500 \(HTTP 500/);
    assert.match(replay.stderr, /replayed 0 of \d+ logged deliveries to broken, \d+ failed/);
  });

  test("notify test of a name that is not configured lists the names", async () => {
    const result = await runNatsmon(["notify", "test", "nope", "--config", config]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /no notification endpoint named "nope"; configured: hook, broken/);
  });
});
