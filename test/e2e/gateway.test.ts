import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createConnection } from "node:net";
import { gunzipSync } from "node:zlib";
import { connect } from "@nats-io/transport-node";
import type { Msg, NatsConnection } from "@nats-io/nats-core";
import {
  MAX_SYSTEM_ID_LENGTH,
  startGateway,
  type Gateway,
  type GatewayOptions,
} from "../../src/gateway/index.ts";
import { silentLogger } from "../../src/lib/index.ts";
import {
  systemSubjects,
  type ColumnsReply,
  type DiscoveryReply,
  type ExplainReply,
  type MacrosReply,
  type SchemasReply,
  type TablesReply,
} from "../../src/protocol/index.ts";
import { httpCall, rawHttpCall } from "../harness/http-call.ts";
import { spawnNatsmon, type NatsmonProcess } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

const TOKEN = "gateway-test-token";
const BODY_LIMIT = 2048;
const MAX_ROWS = 5;
/** A valid id past the 100 characters Fastify's router allows a path parameter by default. */
const LONG_ID = `long-${"x".repeat(145)}`;

interface ErrorBody {
  code: number;
  description: string;
  data?: unknown;
}

describe("the HTTP gateway in front of a real node", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let node: NatsmonProcess;
  let busUrl: string;
  let gateway: Gateway;
  let nc: NatsConnection;
  /** The suite's gateway settings, in front of its node, with `extra` over them. */
  const gatewayOptions = (extra: Partial<GatewayOptions> = {}): GatewayOptions => ({
    bus: { url: busUrl },
    authToken: TOKEN,
    host: "127.0.0.1",
    port: 0,
    requestTimeoutMs: 30_000,
    systemsWindowMs: 500,
    bodyLimitBytes: BODY_LIMIT,
    log: silentLogger(),
    ...extra,
  });
  const post = (path: string, body?: string, headers: Record<string, string> = {}) =>
    httpCall(gateway.url, path, {
      method: "POST",
      token: TOKEN,
      headers,
      ...(body === undefined ? {} : { body }),
    });

  before(async () => {
    dir = await tempDir();
    node = spawnNatsmon(["run", "--data-dir", dir.path], {
      NATSMON_SINK_EMBEDDED_PORT: "-1",
      NATSMON_DB_QUERY_MAX_ROWS: String(MAX_ROWS),
      NATSMON_DB_QUERY_TIMEOUT: "1s",
    });
    busUrl = await node.waitForUrl();
    nc = await connect({ servers: busUrl });
    gateway = await startGateway(gatewayOptions());
    await waitFor(async () => (await post("/sys/local/db/schemas")).status === 200, {
      message: "the node's catalog to answer through the gateway",
    });
  });

  after(async () => {
    await gateway?.close();
    await nc?.close();
    await node?.kill("SIGTERM");
    await dir?.[Symbol.asyncDispose]();
  });

  test("every db route answers with its subject's JSON reply; empty bodies count as {}", async () => {
    const query = await post(
      "/sys/local/db/query",
      JSON.stringify({ sql: "SELECT $1::INT + 1 AS n, 'x' AS s", params: [41] }),
    );
    assert.equal(query.status, 200, query.text);
    assert.match(query.headers.get("content-type") ?? "", /^application\/json/);
    assert.deepEqual(query.json(), [{ n: 42, s: "x" }]);

    const explain = await post(
      "/sys/local/db/explain",
      JSON.stringify({ sql: "SELECT count(*) FROM hx.epochs", analyze: false }),
    );
    assert.equal(explain.status, 200, explain.text);
    assert.equal(explain.json<ExplainReply>().plan[0]?.explain_key, "physical_plan");

    const schemas = await post("/sys/local/db/schemas");
    assert.deepEqual(
      schemas.json<SchemasReply>().schemas.map((s) => s.name),
      ["hx", "main", "checks", "contexts"],
    );
    // An empty body with a JSON content type is as good as no body.
    const tables = await post("/sys/local/db/tables", "", { "content-type": "application/json" });
    assert.equal(tables.status, 200, tables.text);
    assert.ok(tables.json<TablesReply>().tables.some((t) => t.schema === "hx" && t.name === "servers"));
    const mainOnly = await post("/sys/local/db/tables", JSON.stringify({ schema: "main" }));
    assert.deepEqual(
      mainOnly.json<TablesReply>().tables.map((t) => `${t.schema}.${t.name}`),
      ["main.catalog_identity", "main.ips", "main.page_views"],
    );

    const columns = await post("/sys/local/db/columns", JSON.stringify({ schema: "hx", table: "epochs" }));
    assert.equal(columns.status, 200, columns.text);
    assert.ok(columns.json<ColumnsReply>().columns.some((c) => c.name === "epoch"));

    const macros = await post("/sys/local/db/macros", JSON.stringify({ schema: "checks" }));
    assert.equal(macros.status, 200, macros.text);
    assert.ok(Array.isArray(macros.json<MacrosReply>().macros));
  });

  test("Accept: text/csv on db/query returns the CSV reply as text/csv", async () => {
    const csv = await post("/sys/local/db/query", JSON.stringify({ sql: "SELECT 1 AS a, 'x,y' AS b" }), {
      accept: "text/csv",
    });
    assert.equal(csv.status, 200, csv.text);
    assert.match(csv.headers.get("content-type") ?? "", /^text\/csv/);
    assert.equal(csv.text, 'a,b\r\n1,"x,y"\r\n');
  });

  test("answers of 1 KiB or more are gzip-compressed for a client that accepts it, JSON and CSV alike", async () => {
    const query = async (sql: string, headers: Record<string, string>) => {
      const answer = await rawHttpCall(new URL("/sys/local/db/query", gateway.url).href, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, ...headers },
        body: JSON.stringify({ sql }),
      });
      assert.equal(answer.status, 200, answer.body.toString());
      return answer;
    };
    const wide = "SELECT i, repeat('natsmon ', 200) AS s FROM range(3) t(i)";
    for (const accept of ["application/json", "text/csv"]) {
      const plain = await query(wide, { accept, "accept-encoding": "identity" });
      assert.equal(plain.headers["content-encoding"], undefined);
      const gzipped = await query(wide, { accept, "accept-encoding": "gzip" });
      assert.equal(gzipped.headers["content-encoding"], "gzip", accept);
      assert.equal(gunzipSync(gzipped.body).toString(), plain.body.toString());
      assert.ok(gzipped.body.byteLength * 5 < plain.body.byteLength, `${accept} compressed`);
      assert.equal(gzipped.headers["content-type"], plain.headers["content-type"]);
    }
    // A small answer is not worth compressing.
    const small = await query("SELECT 1 AS n", { "accept-encoding": "gzip" });
    assert.equal(small.headers["content-encoding"], undefined);
    assert.deepEqual(JSON.parse(small.body.toString()), [{ n: 1 }]);
  });

  test("GET /systems returns the discovery replies as a JSON array", async () => {
    const systems = await httpCall(gateway.url, "/systems", { token: TOKEN });
    assert.equal(systems.status, 200, systems.text);
    const replies = systems.json<DiscoveryReply[]>();
    assert.equal(replies.length, 1);
    assert.equal(replies[0]?.node_id, "local");
    assert.deepEqual(
      replies[0]?.systems.map((s) => [s.id, [...s.roles].sort()]),
      [["local", ["catalog", "scrape"]]],
    );
  });

  test("GET /healthz needs no token and reports the bus connected", async () => {
    const health = await httpCall(gateway.url, "/healthz");
    assert.equal(health.status, 200, health.text);
    const { rtt_ms, ...rest } = health.json<{ rtt_ms: number }>();
    assert.deepEqual(rest, { status: "ok", bus: "connected", server: new URL(busUrl).host });
    assert.ok(typeof rtt_ms === "number" && rtt_ms >= 0, String(rtt_ms));
  });

  test("a missing or wrong bearer token gets 401 with a Bearer challenge on every other route", async () => {
    const routes: [string, string | undefined][] = [
      ["/systems", undefined],
      ["/sys/local/db/query", JSON.stringify({ sql: "SELECT 1" })],
      ["/sys/local/db/explain", JSON.stringify({ sql: "SELECT 1", analyze: false })],
      ["/sys/local/db/schemas", "{}"],
      ["/sys/local/db/tables", "{}"],
      ["/sys/local/db/columns", JSON.stringify({ schema: "hx", table: "epochs" })],
      ["/sys/local/db/macros", "{}"],
      // Paths the router itself refuses or would have refused: a long id, a malformed escape.
      [`/sys/${LONG_ID}/db/query`, JSON.stringify({ sql: "SELECT 1" })],
      ["/sys/a%ZZ/db/query", JSON.stringify({ sql: "SELECT 1" })],
    ];
    for (const [path, body] of routes) {
      const init = body === undefined ? {} : { body };
      const missing = await httpCall(gateway.url, path, init);
      assert.equal(missing.status, 401, path);
      assert.equal(missing.headers.get("www-authenticate"), 'Bearer realm="natsmon"');
      assert.equal(missing.json<ErrorBody>().code, 401);
      const wrong = await httpCall(gateway.url, path, { ...init, token: `${TOKEN}x` });
      assert.equal(wrong.status, 401, path);
      assert.equal(wrong.headers.get("www-authenticate"), 'Bearer realm="natsmon", error="invalid_token"');
      const basic = await httpCall(gateway.url, path, {
        ...init,
        headers: { authorization: `Basic ${TOKEN}` },
      });
      assert.equal(basic.status, 401, path);
    }
  });

  test("a system id that is not a subject token gets 400 and never reaches the bus", async () => {
    // A request the gateway does send, after the refused ones on the same connection, marks the end.
    const marker = systemSubjects("marker-system").dbQuery;
    const seen: string[] = [];
    const spy = nc.subscribe(">", {
      callback: (_err, msg: Msg) => {
        seen.push(msg.subject);
        if (msg.subject === marker) msg.respond("[]");
      },
    });
    try {
      await nc.flush();
      const refused: [string, RegExp][] = [
        ...["a.b", "a*", "a%3E", "a%20b", "%24SYS", `${LONG_ID.slice(0, 75)}.${LONG_ID.slice(76)}`].map(
          (id): [string, RegExp] => [id, /is not a subject token/],
        ),
        ["x".repeat(MAX_SYSTEM_ID_LENGTH + 1), /at most 3840/],
        ["a%ZZ", /is not a valid url component/],
      ];
      for (const [id, description] of refused) {
        const r = await post(`/sys/${id}/db/query`, JSON.stringify({ sql: "SELECT 1" }));
        assert.equal(r.status, 400, id);
        assert.equal(r.json<ErrorBody>().code, 400);
        assert.match(r.json<ErrorBody>().description, description);
      }
      assert.equal((await post("/sys/marker-system/db/query", "{}")).text, "[]");
    } finally {
      spy.unsubscribe();
    }
    assert.deepEqual(
      seen.filter((s) => s.includes(".db.")),
      [marker],
    );
  });

  test("upstream errors keep their status: 400 invalid SQL, 413 over db.query-max-rows, 408, 404 no such table", async () => {
    const invalid = await post("/sys/local/db/query", JSON.stringify({ sql: "SELECT * FROM no_such_table" }));
    assert.equal(invalid.status, 400);
    assert.match(invalid.json<ErrorBody>().description, /no_such_table/);
    const write = await post("/sys/local/db/query", JSON.stringify({ sql: "DELETE FROM hx.epochs" }));
    assert.equal(write.status, 400);

    const tooMany = await post(
      "/sys/local/db/query",
      JSON.stringify({ sql: `SELECT * FROM range(${MAX_ROWS + 1})` }),
    );
    assert.equal(tooMany.status, 413);
    assert.match(tooMany.json<ErrorBody>().description, /db\.query-max-rows/);
    const atCap = await post(
      "/sys/local/db/query",
      JSON.stringify({ sql: `SELECT * FROM range(${MAX_ROWS})` }),
    );
    assert.equal(atCap.status, 200);

    // The node's query timeout ends the query well inside the gateway's request timeout.
    const slow = await post(
      "/sys/local/db/query",
      JSON.stringify({ sql: "SELECT count(*) FROM range(100000000000) a, range(10) b" }),
    );
    assert.equal(slow.status, 408, slow.text);

    const noTable = await post("/sys/local/db/columns", JSON.stringify({ schema: "hx", table: "nope" }));
    assert.equal(noTable.status, 404);
    assert.equal(noTable.json<ErrorBody>().code, 404);
  });

  test("the Monitor-Api-Version header reaches the node as sent", async () => {
    const current = await post("/sys/local/db/query", JSON.stringify({ sql: "SELECT 1 AS one" }), {
      "monitor-api-version": "1",
    });
    assert.equal(current.status, 200, current.text);
    const future = await post("/sys/local/db/query", JSON.stringify({ sql: "SELECT 1 AS one" }), {
      "monitor-api-version": "2",
    });
    assert.equal(future.status, 400);
    assert.match(future.json<ErrorBody>().description, /Monitor-Api-Version 2 is not supported/);
  });

  test("an invalid JSON body gets 400 and a body over the limit 413, both from the gateway", async () => {
    const invalid = await post("/sys/local/db/query", '{"sql": ');
    assert.equal(invalid.status, 400);
    assert.match(invalid.json<ErrorBody>().description, /invalid JSON body/);
    const large = await post(
      "/sys/local/db/query",
      JSON.stringify({ sql: `SELECT '${"x".repeat(BODY_LIMIT)}'` }),
    );
    assert.equal(large.status, 413);
    assert.match(large.json<ErrorBody>().description, new RegExp(`limit of ${BODY_LIMIT} bytes`));
  });

  test("what Node's HTTP parser refuses gets the gateway's error shape: 431 over its 16 KiB limit, token or not; 400 malformed", async () => {
    const path = `/sys/${"z".repeat(17 * 1024)}/db/query`;
    for (const token of [TOKEN, undefined]) {
      const r = await httpCall(gateway.url, path, {
        method: "POST",
        body: "{}",
        ...(token === undefined ? {} : { token }),
      });
      assert.equal(r.status, 431);
      assert.equal(r.json<ErrorBody>().code, 431);
      assert.match(r.json<ErrorBody>().description, /exceed 16384 bytes, Node's HTTP limit/);
    }
    // Malformed HTTP never reaches fetch: sent by hand, it gets a 400 in the same shape.
    const { hostname, port } = new URL(gateway.url);
    const socket = createConnection({ host: hostname, port: Number(port) });
    socket.end("NOT HTTP AT ALL\r\n\r\n");
    const raw = Buffer.concat(await socket.toArray()).toString();
    assert.match(raw, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.deepEqual(JSON.parse(raw.slice(raw.indexOf("\r\n\r\n") + 4)), {
      code: 400,
      description: "malformed HTTP request",
    });
    assert.equal((await post("/sys/local/db/schemas")).status, 200);
  });

  test("a request sent too slowly, headers or body, gets 408 once --receive-timeout passes, and its connection closes", async () => {
    await using slow = await startGateway(gatewayOptions({ receiveTimeoutMs: 400 }));
    const { hostname, port } = new URL(slow.url);
    const head = `POST /sys/local/db/query HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\n`;
    // Headers never finished; then complete headers with only half the promised body.
    for (const partial of [head, `${head}Content-Length: 20\r\n\r\n{"sql": "SEL`]) {
      const socket = createConnection({ host: hostname, port: Number(port) });
      socket.write(partial);
      // The server ends the exchange: reading to the end returns only because it closed.
      const raw = Buffer.concat(await socket.toArray()).toString();
      assert.match(raw, /^HTTP\/1\.1 408 Request Timeout\r\n/);
      assert.deepEqual(JSON.parse(raw.slice(raw.indexOf("\r\n\r\n") + 4)), {
        code: 408,
        description:
          "the request did not arrive in full within 400 ms (--receive-timeout); the connection is closed",
      });
    }
    // A request sent at once is unaffected, also when its answer takes longer than the bound.
    const sub = nc.subscribe(systemSubjects("slowpoke").dbQuery, {
      callback: (_err, msg) => void setTimeout(() => msg.respond('{"rows":[]}'), 1200),
    });
    await nc.flush();
    const r = await httpCall(slow.url, "/sys/slowpoke/db/query", {
      token: TOKEN,
      body: '{"sql":"SELECT 1"}',
    });
    sub.unsubscribe();
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json(), { rows: [] });
  });

  test("an unknown system gets 503 saying no responder exists and pointing at GET /systems", async () => {
    const r = await post("/sys/no-such-system/db/query", JSON.stringify({ sql: "SELECT 1" }));
    assert.equal(r.status, 503);
    assert.match(
      r.json<ErrorBody>().description,
      /no responder exists for system "no-such-system".*GET \/systems/,
    );
  });

  test("a system id past the router's default 100 characters reaches the bus, up to the longest one that fits", async () => {
    for (const id of [LONG_ID, "y".repeat(MAX_SYSTEM_ID_LENGTH)]) {
      const r = await post(`/sys/${id}/db/explain`, JSON.stringify({ sql: "SELECT 1", analyze: false }));
      assert.equal(r.status, 503, r.text.slice(0, 200));
      assert.match(
        r.json<ErrorBody>().description,
        new RegExp(`no responder exists for system "${id}".*GET /systems`),
      );
    }
    // A request over nats-server's control line gets no answer: the server closes the connection
    // instead. The 503s show both fit, and the connection goes on serving.
    assert.equal((await post("/sys/local/db/schemas")).status, 200);
  });

  test("a responder that never answers gets 504 once the request timeout passes", async () => {
    const silent = systemSubjects("silent");
    const received: string[] = [];
    const sub = nc.subscribe(silent.dbQuery, {
      callback: (_err, msg) => {
        received.push(msg.string());
      },
    });
    await nc.flush();
    await using impatient = await startGateway(gatewayOptions({ requestTimeoutMs: 300 }));
    const r = await httpCall(impatient.url, "/sys/silent/db/query", {
      token: TOKEN,
      body: '{"sql":"SELECT 1"}',
    });
    sub.unsubscribe();
    assert.equal(r.status, 504);
    assert.match(r.json<ErrorBody>().description, /no answer from system "silent" within 300 ms/);
    assert.deepEqual(received, ['{"sql":"SELECT 1"}']);
  });
});
