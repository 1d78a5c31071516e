import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import type { Msg } from "@nats-io/nats-core";
import { MISSING_TOKEN_MESSAGE, startGateway, type GatewayOptions } from "../../src/gateway/index.ts";
import { silentLogger } from "../../src/lib/index.ts";
import { startNatsServer } from "../../src/bus/index.ts";
import { PING_SUBJECT, systemSubjects } from "../../src/protocol/index.ts";
import { httpCall } from "../harness/http-call.ts";
import { runNatsmon, spawnNatsmon } from "../harness/natsmon-process.ts";
import { startTestServer } from "../harness/start-nats-server.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

const TOKEN = "process-test-token";
const LISTENS_AT = /listens at (http:\/\/[\d.:]*\d)/;

interface ErrorBody {
  code: number;
  description: string;
}

function gatewayOptions(url: string, extra: Partial<GatewayOptions> = {}): GatewayOptions {
  return {
    bus: { url },
    authToken: TOKEN,
    host: "127.0.0.1",
    port: 0,
    requestTimeoutMs: 30_000,
    systemsWindowMs: 300,
    bodyLimitBytes: 1024 * 1024,
    log: silentLogger(),
    ...extra,
  };
}

test("natsmon gateway refuses to start without a token, with an unusable token, with bad flags or without its bus", async () => {
  for (const env of [{}, { NATSMON_GATEWAY_AUTH_TOKEN: "" }] as Record<string, string>[]) {
    const refused = await runNatsmon(
      ["gateway", "--server", "nats://127.0.0.1:1", "--listen", "127.0.0.1:0"],
      env,
    );
    assert.equal(refused.code, 2);
    assert.ok(refused.stderr.includes(MISSING_TOKEN_MESSAGE), refused.stderr);
    assert.equal(refused.stdout, "");
  }
  const badFlags = await runNatsmon(
    [
      "gateway",
      "--server",
      "nats://127.0.0.1:1",
      "--receive-timeout",
      "0s",
      "--body-limit",
      "-1",
      "--request-timeout",
      "700h",
    ],
    { NATSMON_GATEWAY_AUTH_TOKEN: TOKEN },
  );
  assert.equal(badFlags.code, 2);
  assert.match(badFlags.stderr, /--receive-timeout 0s is not a positive duration/);
  assert.match(badFlags.stderr, /--body-limit -1 is not a positive number of bytes/);
  assert.match(badFlags.stderr, /--request-timeout 700h is longer than 596h/);
  const noBus = await runNatsmon([
    "gateway",
    "--auth-token",
    TOKEN,
    "--server",
    "nats://user:pw@127.0.0.1:1",
    "--listen",
    "127.0.0.1:0",
  ]);
  assert.equal(noBus.code, 1);
  assert.match(
    noBus.stderr,
    /gateway did not start: cannot connect to the bus at nats:\/\/user:\*\*\*@127\.0\.0\.1:1: /,
  );
  assert.doesNotMatch(noBus.stderr, /pw@/, "the password stays out of the message");
  await assert.rejects(
    startGateway(gatewayOptions("nats://127.0.0.1:1", { authToken: undefined })),
    (err: Error) => err.message === MISSING_TOKEN_MESSAGE,
  );
  await assert.rejects(
    startGateway(gatewayOptions("nats://127.0.0.1:1", { authToken: "two words" })),
    /visible ASCII characters without spaces/,
  );
});

test("natsmon gateway --allow-unauthenticated serves every route without a token", async () => {
  await using server = await startTestServer("gw-open");
  // An empty token in the environment counts as none, so only the flag lets it start.
  await using gateway = spawnNatsmon(
    ["gateway", "--allow-unauthenticated", "--server", server.url, "--listen", "127.0.0.1:0"],
    { NATSMON_GATEWAY_AUTH_TOKEN: "" },
  );
  const base = await waitFor(() => LISTENS_AT.exec(gateway.stdout())?.[1], {
    message: "the gateway to print its URL",
  });
  assert.match(gateway.stderr(), /serves without authentication \(--allow-unauthenticated\)/);
  const systems = await httpCall(base, "/systems");
  assert.equal(systems.status, 200, systems.text);
  assert.deepEqual(systems.json(), []);
  const query = await httpCall(base, "/sys/nobody/db/query", { body: '{"sql":"SELECT 1"}' });
  assert.equal(query.status, 503, query.text);
  assert.match(query.json<ErrorBody>().description, /no responder exists for system "nobody"/);
});

test("natsmon gateway spawned: the token from the environment guards it, SIGTERM lets an in-flight request finish", async () => {
  await using server = await startTestServer("gw-proc");
  const nc = await connect({ servers: server.url });
  const held: Msg[] = [];
  const sub = nc.subscribe(systemSubjects("slow").dbQuery, {
    callback: (_err, msg) => {
      held.push(msg);
    },
  });
  await nc.flush();
  await using gateway = spawnNatsmon(["gateway", "--server", server.url, "--listen", "127.0.0.1:0"], {
    NATSMON_GATEWAY_AUTH_TOKEN: TOKEN,
  });
  try {
    const base = await waitFor(() => LISTENS_AT.exec(gateway.stdout())?.[1], {
      message: "the gateway to print its URL",
    });
    assert.equal((await httpCall(base, "/healthz")).status, 200);
    assert.equal((await httpCall(base, "/systems")).status, 401);
    assert.equal((await httpCall(base, "/systems", { token: TOKEN })).status, 200);

    const inFlight = httpCall(base, "/sys/slow/db/query", { token: TOKEN, body: '{"sql":"SELECT 1"}' });
    const msg = await waitFor(() => held[0], { message: "the request to reach the bus" });
    gateway.child.kill("SIGTERM");
    await waitFor(() => gateway.stderr().includes('"msg":"stopping"'), {
      message: "the gateway to start stopping",
    });
    msg.respond('[{"answered":"after SIGTERM"}]');
    const answer = await inFlight;
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(answer.json(), [{ answered: "after SIGTERM" }]);
    assert.equal(await gateway.exited, 0, gateway.stderr());
    assert.match(gateway.stderr(), /"msg":"gateway stopped"/);
  } finally {
    sub.unsubscribe();
    await nc.close();
  }
});

test("while the bus is down /healthz is 503 and requests get 502; both recover when it returns", async () => {
  await using server = await startTestServer("gw-down");
  await using gateway = await startGateway(gatewayOptions(server.url));
  assert.equal((await httpCall(gateway.url, "/healthz")).status, 200);

  await server.stop();
  const down = await waitFor(
    async () => {
      const health = await httpCall(gateway.url, "/healthz");
      return health.status === 503 && health;
    },
    { message: "/healthz to report the bus down" },
  );
  assert.deepEqual(down.json(), { status: "unavailable", bus: "disconnected" });
  const query = await httpCall(gateway.url, "/sys/any/db/query", {
    token: TOKEN,
    body: '{"sql":"SELECT 1"}',
  });
  assert.equal(query.status, 502);
  assert.match(query.json<ErrorBody>().description, /bus connection is disconnected/);
  const systems = await httpCall(gateway.url, "/systems", { token: TOKEN });
  assert.equal(systems.status, 502);

  await server.restart();
  await waitFor(async () => (await httpCall(gateway.url, "/healthz")).status === 200, {
    message: "/healthz to report the bus back",
  });
  const back = await httpCall(gateway.url, "/sys/any/db/query", { token: TOKEN, body: '{"sql":"SELECT 1"}' });
  assert.equal(back.status, 503);
});

test("a bus request the gateway's user may not publish gets 502 with the server's reason", async () => {
  // A real transport failure: nats-server refuses the publish with a permissions violation,
  // which the client hands to the waiting request at once, before its timeout.
  await using dir = await tempDir();
  const granted = systemSubjects("granted").dbQuery;
  const refused = systemSubjects("refused").dbQuery;
  await using server = await startNatsServer({
    workDir: dir.path,
    configText: [
      "listen: 127.0.0.1:-1",
      `ports_file_dir: ${JSON.stringify(dir.path)}`,
      "authorization { users: [",
      `  {user: gateway, password: gateway, permissions: {publish: {allow: ${JSON.stringify([PING_SUBJECT, granted])}}, subscribe: {allow: ["_INBOX.>"]}}}`,
      "] }",
      "",
    ].join("\n"),
  });
  await using gateway = await startGateway(
    gatewayOptions(server.clientUrl, {
      bus: { url: server.clientUrl, user: "gateway", password: "gateway" },
    }),
  );
  const r = await httpCall(gateway.url, "/sys/refused/db/query", {
    token: TOKEN,
    body: '{"sql":"SELECT 1"}',
  });
  assert.equal(r.status, 502, r.text);
  assert.equal(
    r.json<ErrorBody>().description,
    `bus request failed: Permissions Violation for Publish to "${refused}"`,
  );
  // The violation costs the gateway nothing else: its connection goes on serving what it may publish.
  assert.equal((await httpCall(gateway.url, "/healthz")).status, 200);
  assert.equal((await httpCall(gateway.url, "/systems", { token: TOKEN })).status, 200);
  const allowed = await httpCall(gateway.url, "/sys/granted/db/query", { token: TOKEN, body: "{}" });
  assert.equal(allowed.status, 503, allowed.text);
});

test("a node whose catalog will not open answers 503 with its own reason, not the missing-responder one", async () => {
  await using dir = await tempDir();
  await writeFile(join(dir.path, "local.duckdb"), "this is not a DuckDB file, it is garbage".repeat(200));
  await using node = spawnNatsmon(["run", "--data-dir", dir.path], { NATSMON_SINK_EMBEDDED_PORT: "-1" });
  await using gateway = await startGateway(gatewayOptions(await node.waitForUrl()));
  const r = await waitFor(
    async () => {
      const answer = await httpCall(gateway.url, "/sys/local/db/schemas", { token: TOKEN, method: "POST" });
      return !/no responder/.test(answer.text) && answer;
    },
    { message: "the node's db endpoints to be registered" },
  );
  assert.equal(r.status, 503);
  assert.match(r.json<ErrorBody>().description, /catalog of system local is not open: /);
});
