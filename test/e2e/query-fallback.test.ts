import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "@nats-io/transport-node";
import { headers, type NatsConnection } from "@nats-io/nats-core";
import {
  ACCEPT,
  CSV_MEDIA_TYPE,
  PING_SUBJECT,
  systemSubjects,
  type DiscoveryReply,
} from "../../src/protocol/index.ts";
import { startTestServer, type TestServer } from "../harness/start-nats-server.ts";
import { runNatsmon } from "../harness/natsmon-process.ts";

/**
 * A system served by an older node: a real nats-server where only `db.query` and the
 * discovery ping are answered (plain subscriptions; db.query replies in its JSON or, with
 * `Accept: text/csv`, CSV format), so db.query.stream has no responder at all.
 */
/** A DuckDB error as it comes: over several lines, past the header's 1 kB. */
const LONG_ERROR = `Binder Error: Referenced column "long_error" not found in FROM clause!\nCandidate bindings: ${"c".repeat(1500)}\n\nLINE 1: SELECT long_error\n               ^`;

describe("natsmon query falls back to db.query when no streaming responder exists", () => {
  let server: TestServer;
  let responder: NatsConnection;
  const requests: { sql: string; params?: unknown[]; accept: string | undefined }[] = [];

  before(async () => {
    server = await startTestServer("legacy");
    responder = await connect({ servers: server.url });
    responder.subscribe(systemSubjects("legacy").dbQuery, {
      callback: (err, msg) => {
        if (err) return;
        const body = msg.json<{ sql: string; params?: unknown[] }>();
        const accept = msg.headers?.get(ACCEPT) || undefined;
        requests.push({ ...body, accept });
        if (body.sql.includes("long_error")) {
          // As natsmon's adapter answers a message with line breaks or over 1 kB: the
          // header folded and cut, the whole message as the error's data.
          const h = headers();
          h.set("Nats-Service-Error-Code", "400");
          h.set("Nats-Service-Error", LONG_ERROR.replaceAll("\n", " ").slice(0, 1024));
          msg.respond(JSON.stringify({ message: LONG_ERROR }), { headers: h });
          return;
        }
        if (body.sql.includes("no_such_table")) {
          // A micro service error, as @nats-io/services writes it.
          const h = headers();
          h.set("Nats-Service-Error-Code", "400");
          h.set("Nats-Service-Error", "Catalog Error: Table with name no_such_table does not exist!");
          msg.respond("", { headers: h });
          return;
        }
        msg.respond(
          accept === CSV_MEDIA_TYPE
            ? 'id,name,"1"\r\n1,"a,b",2026-11-22T11:02:14.000Z\r\n2,,x\r\n'
            : JSON.stringify([
                { id: 1, name: "a,b", "1": "2026-11-22T11:02:14.000Z" },
                { id: 2, name: null, "1": "x" },
              ]),
        );
      },
    });
    const discovery: DiscoveryReply = {
      node_id: "legacy-node",
      version: "0.0.1",
      capabilities: {},
      systems: [{ id: "legacy", roles: ["scrape", "catalog"] }],
    };
    responder.subscribe(PING_SUBJECT, {
      callback: (_err, msg) => {
        msg.respond(JSON.stringify(discovery));
      },
    });
    await responder.flush();
  });

  after(async () => {
    await responder?.close();
    await server?.[Symbol.asyncDispose]();
  });

  const query = (args: readonly string[]) =>
    runNatsmon(["query", "--server", server.url, "--system", "legacy", ...args]);
  const NOTICE =
    /^natsmon: system "legacy" has no db\.query\.stream responder; the result comes from db\.query \(buffered/;

  test("json: db.query's reply is printed, with a one-line notice on stderr", async () => {
    const r = await query(["--format", "json", "SELECT * FROM t WHERE id < $1", "-p", "5"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, NOTICE);
    assert.equal(r.stderr.trim().split("\n").length, 1);
    assert.deepEqual(JSON.parse(r.stdout), [
      { id: 1, name: "a,b", "1": "2026-11-22T11:02:14.000Z" },
      { id: 2, name: null, "1": "x" },
    ]);
    assert.deepEqual(requests.at(-1), {
      sql: "SELECT * FROM t WHERE id < $1",
      params: [5],
      accept: undefined,
    });
  });

  test("csv and table ask for db.query's CSV, which keeps the column order", async () => {
    const csv = await query(["--format", "csv", "SELECT * FROM t"]);
    assert.equal(csv.code, 0, csv.stderr);
    assert.match(csv.stderr, NOTICE);
    assert.equal(csv.stdout, 'id,name,"1"\r\n1,"a,b",2026-11-22T11:02:14.000Z\r\n2,,x\r\n');
    assert.equal(requests.at(-1)?.accept, CSV_MEDIA_TYPE);

    const table = await query(["SELECT * FROM t"]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stderr, NOTICE);
    assert.equal(
      table.stdout,
      "id  name  1\n" +
        "--  ----  ------------------------\n" +
        " 1  a,b   2026-11-22T11:02:14.000Z\n" +
        " 2  NULL  x\n" +
        "(2 rows)\n",
    );
  });

  test("an error from db.query exits non-zero with its code and description, and no notice", async () => {
    const r = await query(["SELECT * FROM no_such_table"]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^natsmon: 400: Catalog Error: Table with name no_such_table does not exist!/);
    assert.doesNotMatch(r.stderr, NOTICE);
  });

  test("an error whose description the header cuts is printed in full, from the error's data", async () => {
    const r = await query(["SELECT long_error"]);
    assert.equal(r.code, 1);
    assert.ok(r.stderr.endsWith(`natsmon: 400: ${LONG_ERROR}\n`), r.stderr);
  });

  test("arrow cannot be built from db.query's reply: a clear error, not a guess", async () => {
    const sent = requests.length;
    const r = await query(["--format", "arrow", "SELECT * FROM t"]);
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr,
      'natsmon: --format arrow needs db.query.stream, and system "legacy" has no responder for it ' +
        "(an older node); --format table, csv or json fall back to db.query\n",
    );
    assert.equal(requests.length, sent, "nothing was sent to db.query");
  });

  test("a system no node serves is named as such, with no fallback notice, in every format", async () => {
    const sent = requests.length;
    const noStream = "neither db.query.stream nor db.query has a responder";
    const noArrow = "db.query.stream has no responder and discovery lists no such system";
    for (const format of ["table", "csv", "json", "arrow"]) {
      const r = await runNatsmon([
        "query",
        "--server",
        server.url,
        "--system",
        "typo",
        "--format",
        format,
        "SELECT 1",
      ]);
      assert.equal(r.code, 1, format);
      assert.equal(
        r.stderr,
        `natsmon: no node serves system "typo" (${format === "arrow" ? noArrow : noStream}); ` +
          "`natsmon systems` lists the systems on this bus\n",
        format,
      );
      assert.equal(r.stdout, "");
    }
    assert.equal(requests.length, sent, "the legacy system's db.query was never asked");
  });
});
