/**
 * The gateway against a plain nats-server whose behaviour the tests change under it:
 * credentials rotated, a server frozen or killed, a small max_payload, stray responders,
 * slow clients, a shutdown with a kept-alive connection.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createConnection } from "node:net";
import { connect } from "@nats-io/transport-node";
import { headers, type NatsConnection } from "@nats-io/nats-core";
import { startNatsServer, type NatsServerProcess } from "../../src/bus/index.ts";
import { startGateway, type Gateway, type GatewayOptions } from "../../src/gateway/index.ts";
import { silentLogger } from "../../src/lib/index.ts";
import { PING_SUBJECT, systemSubjects } from "../../src/protocol/index.ts";
import { httpCall } from "../harness/http-call.ts";
import { portOf } from "../harness/start-nats-server.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

const TOKEN = "gateway-bus-token";
const MAX_PAYLOAD = 4096;
const USER = "gw";

function serverConfig(workDir: string, port: number, password: string): string {
  return [
    "host: 127.0.0.1",
    `port: ${port}`,
    `ports_file_dir: ${JSON.stringify(workDir)}`,
    `max_payload: ${MAX_PAYLOAD}`,
    `authorization { user: ${USER}, password: ${password} }`,
    "",
  ].join("\n");
}

/** Answers `subject` with the request's own body, after `delayMs`. */
function echo(nc: NatsConnection, subject: string, delayMs = 0) {
  return nc.subscribe(subject, {
    callback: (_err, msg) => void setTimeout(() => msg.respond(msg.data), delayMs),
  });
}

describe("the gateway when its bus misbehaves", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let server: NatsServerProcess;
  let nc: NatsConnection;
  let gateway: Gateway;
  const options = (extra: Partial<GatewayOptions> = {}): GatewayOptions => ({
    bus: { url: server.clientUrl, user: USER, password: "one" },
    authToken: TOKEN,
    host: "127.0.0.1",
    port: 0,
    requestTimeoutMs: 30_000,
    systemsWindowMs: 300,
    bodyLimitBytes: 4 * MAX_PAYLOAD,
    log: silentLogger(),
    ...extra,
  });
  const setPassword = async (password: string) => {
    await writeFile(
      join(dir.path, "nats-server.conf"),
      serverConfig(dir.path, portOf(server.clientUrl), password),
    );
    server.kill("SIGHUP");
  };
  const health = async () =>
    (await httpCall(gateway.url, "/healthz")).json<{ status: string; bus: string }>();

  before(async () => {
    dir = await tempDir();
    server = await startNatsServer({ workDir: dir.path, configText: serverConfig(dir.path, -1, "one") });
    nc = await connect({
      servers: server.clientUrl,
      user: USER,
      pass: "one",
      maxReconnectAttempts: -1,
      ignoreAuthErrorAbort: true,
    });
    gateway = await startGateway(options());
  });

  after(async () => {
    await gateway?.close();
    await nc?.close();
    await server?.stop();
    await dir?.[Symbol.asyncDispose]();
  });

  test("a body within --body-limit but over the bus's max_payload gets 413, not 500", async () => {
    const sub = echo(nc, systemSubjects("echo").dbQuery);
    await nc.flush();
    const fits = await httpCall(gateway.url, "/sys/echo/db/query", {
      token: TOKEN,
      body: '{"sql":"SELECT 1"}',
    });
    assert.equal(fits.status, 200, fits.text);
    const big = JSON.stringify({ sql: `SELECT '${"x".repeat(MAX_PAYLOAD)}'` });
    const r = await httpCall(gateway.url, "/sys/echo/db/query", { token: TOKEN, body: big });
    sub.unsubscribe();
    assert.equal(r.status, 413, r.text);
    assert.match(
      r.json<{ description: string }>().description,
      /larger than the bus's max_payload \(4096 bytes/,
    );
  });

  test("a Content-Type Fastify cannot parse is read as JSON like any other", async () => {
    const sub = echo(nc, systemSubjects("echo").dbQuery);
    await nc.flush();
    for (const type of ["foo", ";;;", "x/y z"]) {
      const r = await httpCall(gateway.url, "/sys/echo/db/query", {
        token: TOKEN,
        body: '{"sql":"SELECT 1"}',
        headers: { "content-type": type },
      });
      assert.equal(r.status, 200, `${type}: ${r.text}`);
      assert.equal(r.text, '{"sql":"SELECT 1"}');
    }
    sub.unsubscribe();
  });

  test("a served path asked with another method gets 405 with Allow; an unknown path 404; the token comes first", async () => {
    const cases: [string, string, string][] = [
      ["GET", "/sys/echo/db/query", "POST"],
      ["PUT", "/sys/echo/db/tables?x=1", "POST"],
      ["POST", "/systems", "GET, HEAD"],
      ["DELETE", "/healthz", "GET, HEAD"],
    ];
    for (const [method, path, allow] of cases) {
      const r = await httpCall(gateway.url, path, { method, token: TOKEN });
      assert.equal(r.status, 405, `${method} ${path}`);
      assert.equal(r.headers.get("allow"), allow);
      assert.deepEqual(r.json(), {
        code: 405,
        description: `${method} is not served on this path; use ${allow}`,
      });
    }
    assert.equal(
      (await httpCall(gateway.url, "/sys/echo/db/drop", { method: "POST", token: TOKEN })).status,
      404,
    );
    assert.equal((await httpCall(gateway.url, "/sys/echo/db/query", { method: "GET" })).status, 401);
  });

  test("an upstream 401 keeps its status and description and carries the challenge every 401 must", async () => {
    const sub = nc.subscribe(systemSubjects("guarded").dbQuery, {
      callback: (_err, msg) => {
        const h = headers();
        h.set("Nats-Service-Error-Code", "401");
        h.set("Nats-Service-Error", "not for you");
        msg.respond("", { headers: h });
      },
    });
    await nc.flush();
    const r = await httpCall(gateway.url, "/sys/guarded/db/query", { token: TOKEN, body: "{}" });
    sub.unsubscribe();
    assert.equal(r.status, 401, r.text);
    assert.deepEqual(r.json(), { code: 401, description: "not for you" });
    assert.equal(r.headers.get("www-authenticate"), 'Bearer realm="natsmon"');
  });

  test("replies to the discovery ping that are not discovery replies are left out of GET /systems", async () => {
    const subs = ["hello", "", "null", "{}", '{"node_id":5,"systems":[]}'].map((body) =>
      nc.subscribe(PING_SUBJECT, { callback: (_err, msg) => void msg.respond(body) }),
    );
    const node = {
      node_id: "n1",
      version: "x",
      capabilities: {},
      systems: [{ id: "a", roles: ["catalog"] }],
    };
    subs.push(
      nc.subscribe(PING_SUBJECT, { callback: (_err, msg) => void msg.respond(JSON.stringify(node)) }),
    );
    await nc.flush();
    const r = await httpCall(gateway.url, "/systems", { token: TOKEN });
    for (const sub of subs) sub.unsubscribe();
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json(), [node]);
  });

  test("a request answered early (401) gets no second response when its body then arrives too slowly", async () => {
    await using slow = await startGateway(options({ receiveTimeoutMs: 300 }));
    const socket = createConnection({ host: "127.0.0.1", port: portOf(slow.url) });
    socket.write("POST /sys/echo/db/query HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\n\r\n{");
    const trickle = setInterval(() => socket.writable && socket.write(" "), 100);
    const raw = Buffer.concat(await socket.toArray()).toString();
    clearInterval(trickle);
    assert.match(raw, /^HTTP\/1\.1 401 /);
    assert.equal(raw.match(/HTTP\/1\.1 \d{3}/g)?.length, 1, raw);
  });

  test("a request completed while the gateway shuts down gets 503 in the gateway's shape", async () => {
    const closing = await startGateway(options());
    const sub = echo(nc, systemSubjects("slow").dbQuery, 800);
    await nc.flush();
    // One request in flight holds the shutdown open; another connection is midway through
    // its headers when the shutdown begins, and finishes them after.
    const inFlight = httpCall(closing.url, "/sys/slow/db/query", {
      token: TOKEN,
      body: '{"sql":"SELECT 1"}',
    });
    const socket = createConnection({ host: "127.0.0.1", port: portOf(closing.url) });
    const received: Buffer[] = [];
    socket.on("data", (b: Buffer) => received.push(b));
    const text = () => Buffer.concat(received).toString();
    socket.write("GET /systems HTTP/1.1\r\nHost: x\r\n");
    await new Promise((r) => setTimeout(r, 300));
    const stopped = closing.close();
    await new Promise((r) => setTimeout(r, 100));
    socket.write(`Authorization: Bearer ${TOKEN}\r\n\r\n`);
    await waitFor(() => /HTTP\/1\.1 503 /.test(text()), { message: "the 503 on the second connection" });
    assert.equal((await inFlight).status, 200);
    const answer = text().slice(text().indexOf("HTTP/1.1 503"));
    assert.deepEqual(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)), {
      code: 503,
      description: "the gateway is shutting down; send the request again (to another gateway)",
    });
    await stopped;
    socket.destroy();
    sub.unsubscribe();
  });

  test("credentials refused on reconnect keep the gateway retrying; it serves again once they work", async () => {
    await setPassword("two");
    await waitFor(async () => (await health()).bus === "disconnected", {
      message: "the gateway to lose the bus",
    });
    // nats.js gives up after two refusals in a row unless told not to; a few seconds is several.
    await new Promise((r) => setTimeout(r, 3500));
    assert.equal((await health()).bus, "disconnected");
    await setPassword("one");
    await waitFor(async () => (await health()).status === "ok", {
      message: "the gateway to reconnect once the password works again",
      timeoutMs: 15_000,
    });
  });

  test("GET /healthz answers 503 unresponsive while the server is frozen, 200 once it answers again", async () => {
    server.kill("SIGSTOP");
    try {
      // A pong the server sent just before it stopped can still answer the first round trip:
      // the next one finds it frozen.
      const frozen = await waitFor(
        async () => {
          const r = await httpCall(gateway.url, "/healthz");
          return r.status === 503 ? r : undefined;
        },
        { message: "healthz to find the server frozen" },
      );
      assert.equal(frozen.json<{ bus: string }>().bus, "unresponsive");
    } finally {
      server.kill("SIGCONT");
    }
    await waitFor(async () => (await health()).status === "ok", { message: "healthz to recover" });
    assert.ok((await httpCall(gateway.url, "/healthz")).json<{ rtt_ms: number }>().rtt_ms >= 0);
  });

  test("a request in flight when the bus connection drops gets 502 at once, not 504 after the timeout", async () => {
    nc.subscribe(systemSubjects("silent").dbQuery, { callback: () => undefined });
    await nc.flush();
    const pending = httpCall(gateway.url, "/sys/silent/db/query", {
      token: TOKEN,
      body: '{"sql":"SELECT 1"}',
    });
    await new Promise((r) => setTimeout(r, 300));
    server.kill("SIGKILL");
    const r = await pending;
    assert.equal(r.status, 502, r.text);
    // 504 would mean it waited out the 30 s request timeout.
    assert.match(r.json<{ description: string }>().description, /dropped before the answer came/);
  });
});
