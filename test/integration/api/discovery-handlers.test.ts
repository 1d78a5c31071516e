import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  dbColumnsHandler,
  dbExplainHandler,
  dbMacrosHandler,
  dbSchemasHandler,
  dbTablesHandler,
  type ApiHandler,
  type DiscoveryPort,
} from "../../../src/api/index.ts";
import {
  explainReadOnly,
  foldEpoch,
  listColumns,
  listMacros,
  listSchemas,
  listTables,
  runReadOnlyQuery,
} from "../../../src/catalog/index.ts";
import { MonError } from "../../../src/domain/index.ts";
import type {
  ColumnsReply,
  ExplainReply,
  MacrosReply,
  SchemasReply,
  TablesReply,
} from "../../../src/protocol/index.ts";
import { SLOW_PREPARE, interruptedTimeout, labEpoch, tempCatalog } from "../catalog/lab-epoch.ts";

/** Seconds of work for DuckDB, whatever the machine: far past the timeout used here. */
const SLOW = "SELECT count(*) FROM range(10000000000) a, range(1000) b";

/** Calls a handler as the adapter would and parses its JSON reply. */
async function call<T>(handler: ApiHandler, body: unknown): Promise<T> {
  const reply = await handler({
    subject: "test",
    data: Buffer.from(typeof body === "string" ? body : JSON.stringify(body)),
    header: () => undefined,
  });
  assert.equal(reply.headers?.["Content-Type"], "application/json");
  return JSON.parse(String(reply.body)) as T;
}

/** Calls a handler that must refuse; returns the MonError's code and message. */
async function refused(handler: ApiHandler, body: unknown): Promise<{ code: number; message: string }> {
  try {
    await call(handler, body);
  } catch (err) {
    if (err instanceof MonError) return { code: err.code, message: err.message };
    throw err;
  }
  assert.fail(`${JSON.stringify(body)} was answered`);
}

describe("the discovery handlers against a real catalog file", () => {
  let t: Awaited<ReturnType<typeof tempCatalog>>;
  let port: DiscoveryPort;
  const timeoutMs = { value: 10_000 };

  before(async () => {
    t = await tempCatalog();
    await foldEpoch(t.catalog, labEpoch("2026-11-22T11:02:13.000Z", 7));
    // Stand-ins for the check and context macros later migrations will create.
    await t.catalog.withWriter(async ({ con }) => {
      await con.run(`
        CREATE MACRO checks.server_001(since, max_rows) AS TABLE
          SELECT epoch, server FROM hx.servers WHERE epoch >= since::TIMESTAMPTZ LIMIT max_rows;
        COMMENT ON MACRO TABLE checks.server_001 IS 'Servers seen since a time';
        CREATE MACRO contexts.pct(part, whole) AS 100.0 * part / whole, (part) AS 100.0 * part;
        CREATE TEMP TABLE scratch (a INTEGER);`);
    });
    port = {
      explain: (r) => explainReadOnly(t.catalog, r, { timeoutMs: timeoutMs.value }),
      schemas: () => listSchemas(t.catalog, timeoutMs.value),
      tables: (schema) => listTables(t.catalog, timeoutMs.value, schema),
      columns: (schema, table) => listColumns(t.catalog, timeoutMs.value, schema, table),
      macros: (schema) => listMacros(t.catalog, timeoutMs.value, schema),
    };
  });

  after(async () => {
    await t?.[Symbol.asyncDispose]();
  });

  test("db.schemas lists the four allowlisted schemas with descriptions and counts", async () => {
    const reply = await call<SchemasReply>(dbSchemasHandler(port), {});
    assert.deepEqual(
      reply.schemas.map((s) => s.name),
      ["hx", "main", "checks", "contexts"],
    );
    const byName = Object.fromEntries(reply.schemas.map((s) => [s.name, s]));
    assert.ok(byName.hx!.tables > 10 && byName.hx!.views > 5, JSON.stringify(byName.hx));
    assert.deepEqual(
      { ...byName.main, description: "" },
      {
        name: "main",
        description: "",
        tables: 3,
        views: 0,
        macros: 0,
      },
    );
    assert.equal(byName.checks!.macros, 1);
    // An overloaded macro counts once.
    assert.equal(byName.contexts!.macros, 1);
    for (const s of reply.schemas) assert.ok(s.description.length > 0, s.name);
    // An empty body is `{}`.
    assert.deepEqual(await call(dbSchemasHandler(port), ""), reply);
  });

  test("db.tables lists tables and views with comments, all schemas or one", async () => {
    const all = await call<TablesReply>(dbTablesHandler(port), {});
    const servers = all.tables.find((x) => x.schema === "hx" && x.name === "servers");
    assert.equal(servers?.type, "view");
    assert.match(servers?.comment ?? "", /server/i);
    assert.equal(servers?.estimated_rows, null);
    const epochs = all.tables.find((x) => x.schema === "hx" && x.name === "epochs");
    assert.equal(epochs?.type, "table");
    assert.ok((epochs?.column_count ?? 0) > 3);
    assert.ok(!all.tables.some((x) => x.name === "scratch"), "temporary tables are not listed");
    assert.ok(all.tables.every((x) => ["hx", "main"].includes(x.schema)));
    const main = await call<TablesReply>(dbTablesHandler(port), { schema: "main" });
    assert.deepEqual(
      main.tables.map((x) => `${x.schema}.${x.name}`),
      ["main.catalog_identity", "main.ips", "main.page_views"],
    );
  });

  test("db.columns gives the table comment and each column's comment, in order", async () => {
    const reply = await call<ColumnsReply>(dbColumnsHandler(port), {
      schema: "hx",
      table: "epochs",
    });
    assert.equal(reply.type, "table");
    assert.match(reply.comment ?? "", /folded epoch/);
    const epoch = reply.columns[0]!;
    assert.deepEqual(
      { name: epoch.name, position: epoch.position, data_type: epoch.data_type, nullable: epoch.nullable },
      { name: "epoch", position: 1, data_type: "TIMESTAMP WITH TIME ZONE", nullable: false },
    );
    assert.match(epoch.comment ?? "", /Start time of the scrape/);
    assert.deepEqual(
      reply.columns.map((c) => c.position),
      reply.columns.map((_, i) => i + 1),
    );
    const view = await call<ColumnsReply>(dbColumnsHandler(port), {
      schema: "hx",
      table: "servers",
    });
    assert.equal(view.type, "view");
    assert.equal(view.columns.find((c) => c.name === "server")?.comment, "Server name.");
  });

  test("db.macros gives each macro overload with its signature", async () => {
    const reply = await call<MacrosReply>(dbMacrosHandler(port), {});
    assert.deepEqual(reply.macros[0], {
      schema: "checks",
      name: "server_001",
      type: "table",
      comment: "Servers seen since a time",
      parameters: [
        { name: "since", type: null },
        { name: "max_rows", type: null },
      ],
      signature: "checks.server_001(since, max_rows)",
      definition: reply.macros[0]!.definition,
    });
    assert.match(reply.macros[0].definition ?? "", /FROM hx\.servers/);
    assert.deepEqual(
      reply.macros.slice(1).map((m) => [m.type, m.signature]),
      [
        ["scalar", "contexts.pct(part)"],
        ["scalar", "contexts.pct(part, whole)"],
      ],
    );
    const checks = await call<MacrosReply>(dbMacrosHandler(port), { schema: "checks" });
    assert.deepEqual(
      checks.macros.map((m) => m.name),
      ["server_001"],
    );
    // The listed signature is callable as a table macro.
    const plan = await call<ExplainReply>(dbExplainHandler(port), {
      sql: "FROM checks.server_001(TIMESTAMPTZ '2026-01-01 00:00:00+00', 5)",
    });
    assert.equal(plan.valid, true);
  });

  test("db.explain plans without running, and with analyze runs and times the statement", async () => {
    const plain = await call<ExplainReply>(dbExplainHandler(port), {
      sql: "SELECT count(*) FROM hx.epochs WHERE marker_seq > $1",
      params: [3],
    });
    assert.equal(plain.valid, true);
    assert.deepEqual(
      plain.plan.map((r) => r.explain_key),
      ["physical_plan"],
    );
    assert.match(plain.plan[0]!.explain_value, /epochs/);
    const analyzed = await call<ExplainReply>(dbExplainHandler(port), {
      sql: "SELECT count(*) FROM hx.epochs",
      analyze: true,
    });
    assert.deepEqual(
      analyzed.plan.map((r) => r.explain_key),
      ["analyzed_plan"],
    );
    assert.match(analyzed.plan[0]!.explain_value, /Total Time/);
  });

  test("db.explain refuses writes and bad SQL with 400, even under analyze, and changes nothing", async () => {
    const explain = dbExplainHandler(port);
    for (const sql of [
      "DELETE FROM hx.epochs",
      "CREATE TABLE x (a INTEGER)",
      "EXPLAIN SELECT 1",
      "SELECT 1; DELETE FROM hx.epochs",
      "SELECT 1\u0000; DELETE FROM hx.epochs",
      "SELECT * FROM checkpoint()",
      "SELEC 1",
      "SELECT * FROM nope",
    ]) {
      for (const analyze of [false, true]) {
        const r = await refused(explain, { sql, analyze });
        assert.equal(r.code, 400, `${sql} analyze=${analyze}: ${r.message}`);
      }
    }
    const count = await call<ExplainReply>(explain, {
      sql: "SELECT count(*) FROM hx.epochs",
      analyze: true,
    });
    assert.equal(count.valid, true);
    const left = await t.catalog.withReader((con) =>
      con.runAndReadAll("SELECT count(*) AS n FROM hx.epochs"),
    );
    assert.equal(Number(left.getRowObjectsJS()[0]!.n), 1);
  });

  test("db.explain with analyze quotes a failing statement's line as db.query does, not the EXPLAIN it wraps", async () => {
    // Fails only once run; padded so DuckDB quotes the line whole, cut short after the
    // EXPLAIN ANALYZE it adds, or cut short for db.query too.
    for (const pad of [0, 45, 60]) {
      const sql = `SELECT ${" ".repeat(pad)}x::INT FROM (VALUES ('a')) t(x) WHERE 1 = 1 AND 2 = 2 AND 3 = 3 AND 4 = 4`;
      const queried = await runReadOnlyQuery(
        t.catalog,
        { sql },
        { maxRows: 10, timeoutMs: 10_000, format: "json" },
      ).then(
        () => assert.fail(`${sql} was answered`),
        (err: Error) => err.message,
      );
      assert.match(queried, /\nLINE 1: .*x::INT/);
      const explained = await refused(dbExplainHandler(port), { sql, analyze: true });
      assert.deepEqual(explained, { code: 400, message: queried });
    }
  });

  test("db.explain refuses in its own words: EXPLAIN is left out, and a PRAGMA points at its table function", async () => {
    const explain = dbExplainHandler(port);
    for (const sql of ["EXPLAIN SELECT 1", "EXPLAIN ANALYZE SELECT 1", "DELETE FROM hx.epochs"]) {
      const r = await refused(explain, { sql });
      assert.match(r.message, /db\.explain takes .*without EXPLAIN.*analyze: true/, sql);
      assert.doesNotMatch(r.message, /db\.query/, sql);
    }
    const cases: [string, RegExp][] = [
      ["PRAGMA version", /SELECT \* FROM pragma_version\(\)$/],
      ["PRAGMA table_info('hx.epochs')", /SELECT \* FROM pragma_table_info\('hx\.epochs'\)$/],
      // DuckDB has no pragma_show_tables(): the PRAGMA is rewritten into a query of its own.
      ["PRAGMA show_tables", /explain the SELECT it stands for instead$/],
    ];
    for (const [sql, message] of cases) {
      const r = await refused(explain, { sql, analyze: true });
      assert.equal(r.code, 400, sql);
      assert.match(r.message, new RegExp(`^PRAGMA \\w+ cannot be explained`), sql);
      assert.match(r.message, message, sql);
    }
  });

  test("bad requests are 400 and an unknown table is 404", async () => {
    const cases: [ApiHandler, unknown, RegExp][] = [
      [dbExplainHandler(port), "{not json", /invalid JSON/],
      [dbExplainHandler(port), {}, /missing SQL/],
      [dbExplainHandler(port), { sql: "SELECT 1", analyze: "yes" }, /analyze/],
      [dbExplainHandler(port), { sql: "SELECT 1", params: 1 }, /params/],
      [dbExplainHandler(port), { sql: "SELECT $1" }, /1 parameters and 0 were given/],
      [dbSchemasHandler(port), "[1]", /JSON object/],
      [dbTablesHandler(port), { schema: "information_schema" }, /hx, main, checks, contexts/],
      [dbMacrosHandler(port), { schema: "system" }, /hx, main, checks, contexts/],
      [dbColumnsHandler(port), { schema: "hx" }, /both are required/],
      [dbColumnsHandler(port), { table: "epochs" }, /both are required/],
      [dbColumnsHandler(port), { schema: "pg_catalog", table: "pg_class" }, /hx, main/],
    ];
    for (const [handler, body, message] of cases) {
      const r = await refused(handler, body);
      assert.equal(r.code, 400, JSON.stringify(body));
      assert.match(r.message, message);
    }
    const missing = await refused(dbColumnsHandler(port), { schema: "hx", table: "nope" });
    assert.equal(missing.code, 404);
    assert.match(missing.message, /hx\.nope/);
  });

  test("db.explain with analyze stops at db.query-timeout with 408 and the connection keeps serving", async () => {
    timeoutMs.value = 300;
    try {
      const r = await refused(dbExplainHandler(port), { sql: SLOW, analyze: true });
      assert.equal(r.code, 408);
    } finally {
      timeoutMs.value = 10_000;
    }
    const again = await call<ExplainReply>(dbExplainHandler(port), {
      sql: "SELECT 42",
      analyze: true,
    });
    assert.equal(again.valid, true);
  });

  test("db.explain interrupts a statement still being prepared at db.query-timeout, with analyze or without", async () => {
    // DuckDB folds the constants while preparing: the deadline must stop that, not let the
    // prepares (and with analyze, the run) go on to their end before answering 408.
    for (const analyze of [false, true]) {
      await assert.rejects(
        explainReadOnly(t.catalog, { sql: SLOW_PREPARE, analyze }, { timeoutMs: 300 }),
        interruptedTimeout,
      );
      const again = await Promise.all(
        [1, 2].map(() => call<ExplainReply>(dbExplainHandler(port), { sql: "SELECT 42", analyze })),
      );
      assert.deepEqual(
        again.map((r) => r.valid),
        [true, true],
      );
    }
  });
});
