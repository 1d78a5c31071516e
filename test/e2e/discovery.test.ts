import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { contextMacroDefaults, CHECKS, HELPER_MACROS } from "../../src/checks/index.ts";
import {
  systemSubjects,
  type ColumnsReply,
  type ExplainReply,
  type MacrosReply,
  type SchemasReply,
  type TablesReply,
} from "../../src/protocol/index.ts";
import { natsmonArgv, runNatsmon, spawnNatsmon, type NatsmonProcess } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";

const subjects = systemSubjects("local");
const SERVER_007 = CHECKS.find((c) => c.code === "server-007")!;

/** Sends a request; answers the parsed body, or the micro error's code and description. */
async function ask<T>(nc: NatsConnection, subject: string, body: unknown = {}) {
  const reply = await nc.request(subject, typeof body === "string" ? body : JSON.stringify(body), {
    timeout: 10_000,
  });
  const code = reply.headers?.get("Nats-Service-Error-Code") || undefined;
  return {
    code,
    error: reply.headers?.get("Nats-Service-Error") || undefined,
    body: code ? undefined : reply.json<T>(),
  };
}

describe("catalog discovery on a node on the embedded default", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let node: NatsmonProcess;
  let url: string;
  let nc: NatsConnection;

  /** `natsmon db <sub> … <args>` against the suite's node and system. */
  const dbArgs = (sub: string, ...args: string[]) => [
    "db",
    sub,
    "--server",
    url,
    "--system",
    "local",
    ...args,
  ];
  const dbCli = (sub: string, ...args: string[]) => runNatsmon(dbArgs(sub, ...args));

  before(async () => {
    dir = await tempDir();
    node = spawnNatsmon(["run", "--data-dir", dir.path], { NATSMON_SINK_EMBEDDED_PORT: "-1" });
    url = await node.waitForUrl();
    nc = await connect({ servers: url });
  });

  after(async () => {
    await nc?.close();
    await node?.kill("SIGTERM");
    await dir?.[Symbol.asyncDispose]();
  });

  test("db.schemas, db.tables, db.columns and db.macros answer from the catalog's metadata", async () => {
    const schemas = await ask<SchemasReply>(nc, subjects.dbSchemas);
    assert.equal(schemas.code, undefined, schemas.error);
    assert.deepEqual(
      schemas.body?.schemas.map((s) => [s.name, s.macros]),
      [
        ["hx", 0],
        ["main", 0],
        ["checks", HELPER_MACROS.length + CHECKS.length],
        ["contexts", contextMacroDefaults().size],
      ],
    );

    const tables = await ask<TablesReply>(nc, subjects.dbTables, { schema: "hx" });
    const servers = tables.body?.tables.find((t) => t.name === "servers");
    assert.equal(servers?.type, "view");
    assert.ok(servers?.comment);

    const columns = await ask<ColumnsReply>(nc, subjects.dbColumns, { schema: "hx", table: "epochs" });
    assert.equal(columns.code, undefined, columns.error);
    assert.match(columns.body?.comment ?? "", /folded epoch/);
    assert.match(columns.body?.columns.find((c) => c.name === "epoch")?.comment ?? "", /Start time/);
    // Names are case-insensitive, as in DuckDB's SQL; the reply names the schema and table as they are.
    const upper = await ask<ColumnsReply>(nc, subjects.dbColumns, { schema: "HX", table: "EPOCHS" });
    assert.deepEqual([upper.body?.schema, upper.body?.table], ["hx", "epochs"]);
    assert.deepEqual(upper.body?.columns, columns.body?.columns);

    const macros = await ask<MacrosReply>(nc, subjects.dbMacros, { schema: "checks" });
    const server007 = macros.body?.macros.find((m) => m.signature.startsWith("checks.server_007("));
    assert.deepEqual(
      [server007?.signature, server007?.type, server007?.comment],
      [
        "checks.server_007(ep_from, ep_to)",
        "table",
        `server-007 ${SERVER_007.name}: ${SERVER_007.description}`,
      ],
    );
    // A threshold is an optional parameter: its default shows, as the macro was installed.
    const server003 = macros.body?.macros.find((m) => m.name === "server_003");
    assert.equal(server003?.signature, "checks.server_003(ep_from, ep_to, p_cpu_percent := 90)");
    assert.deepEqual(server003?.parameters, [
      { name: "ep_from", type: null },
      { name: "ep_to", type: null },
      { name: "p_cpu_percent", type: null, default: "90" },
    ]);
    const omitted = await ask<ExplainReply>(nc, subjects.dbExplain, {
      sql: "FROM checks.server_003(now() - INTERVAL 1 HOUR, now())",
    });
    assert.equal(omitted.body?.valid, true);
  });

  test("db.explain plans, and with analyze runs and times, a read-only statement", async () => {
    const plain = await ask<ExplainReply>(nc, subjects.dbExplain, {
      sql: "SELECT count(*) FROM hx.epochs WHERE marker_seq > $1",
      params: [0],
    });
    assert.equal(plain.code, undefined, plain.error);
    assert.equal(plain.body?.valid, true);
    assert.equal(plain.body?.plan[0]?.explain_key, "physical_plan");
    const analyzed = await ask<ExplainReply>(nc, subjects.dbExplain, {
      sql: "FROM checks.server_007('2026-01-01T00:00:00Z', now())",
      analyze: true,
    });
    assert.equal(analyzed.code, undefined, analyzed.error);
    assert.equal(analyzed.body?.plan[0]?.explain_key, "analyzed_plan");
    assert.match(analyzed.body?.plan[0]?.explain_value ?? "", /Total Time/);
  });

  test("db.explain reports DuckDB's errors at the client's own line numbers, as db.query does; without analyze it only plans", async () => {
    // Fails only once run, so with analyze the error comes from the wrapped statement, not the guard.
    const sql = "SELECT 1\nFROM (VALUES ('a'), ('b')) v(x)\nWHERE x::INTEGER > 0";
    const explained = await ask(nc, subjects.dbExplain, { sql, analyze: true });
    const queried = await ask(nc, subjects.dbQuery, { sql });
    assert.equal(explained.code, "400");
    assert.match(queried.error ?? "", /LINE 3:/);
    assert.match(explained.error ?? "", /LINE 3:/);
    // Without analyze the statement is only planned, so what fails when run plans fine.
    const planned = await ask<ExplainReply>(nc, subjects.dbExplain, { sql, analyze: false });
    assert.equal(planned.code, undefined, planned.error);
    assert.equal(planned.body?.plan[0]?.explain_key, "physical_plan");
  });

  test("db.explain refuses a read-only PRAGMA, which db.query runs, saying what to explain instead", async () => {
    assert.equal((await ask(nc, subjects.dbQuery, { sql: "PRAGMA version" })).code, undefined);
    const r = await ask(nc, subjects.dbExplain, { sql: "-- which version\nPRAGMA version", analyze: true });
    assert.equal(r.code, "400");
    assert.match(r.error ?? "", /PRAGMA version cannot be explained.*SELECT \* FROM pragma_version\(\)/);
  });

  test("refuses writes, bad JSON, missing SQL and schemas outside the allowlist with 400", async () => {
    for (const analyze of [false, true]) {
      const write = await ask(nc, subjects.dbExplain, { sql: "DELETE FROM hx.epochs", analyze });
      assert.equal(write.code, "400");
      assert.match(write.error ?? "", /DELETE statements are refused/);
    }
    const cases: [string, unknown][] = [
      [subjects.dbExplain, "{not json"],
      [subjects.dbExplain, { analyze: true }],
      [subjects.dbExplain, { sql: "SELECT * FROM no_such_table" }],
      [subjects.dbSchemas, "{not json"],
      [subjects.dbTables, { schema: "information_schema" }],
      [subjects.dbColumns, { schema: "hx" }],
      [subjects.dbMacros, { schema: "system" }],
    ];
    for (const [subject, body] of cases) {
      const r = await ask(nc, subject, body);
      assert.equal(r.code, "400", `${subject} ${JSON.stringify(body)} → ${r.code} ${r.error}`);
    }
    const missing = await ask(nc, subjects.dbColumns, { schema: "hx", table: "nope" });
    assert.equal(missing.code, "404");
  });

  test("natsmon db answers each subcommand spawned as a process", async () => {
    const schemas = await runNatsmon(["db", "schemas", "--server", url]);
    assert.equal(schemas.code, 0, schemas.stderr);
    assert.match(schemas.stdout, /^name\s+tables\s+views\s+macros\s+description\n/);
    assert.match(
      schemas.stdout,
      new RegExp(
        `\\nchecks\\s+0\\s+0\\s+${HELPER_MACROS.length + CHECKS.length}\\s+One table macro per check`,
      ),
    );

    const tables = await dbCli("tables", "--schema", "main");
    assert.equal(tables.code, 0, tables.stderr);
    assert.match(tables.stdout, /\nmain\.ips\s+table\s+7\s/);
    assert.match(tables.stdout, /\nmain\.page_views\s+table\s+6\s/);
    assert.match(tables.stdout, /\nmain\.catalog_identity\s+table\s+2\s/);
    assert.match(tables.stdout, /\(3 rows\)\n$/);

    const columns = await dbCli("columns", "hx.epochs");
    assert.equal(columns.code, 0, columns.stderr);
    assert.match(columns.stdout, /^hx\.epochs \(table\): One row per folded epoch/);
    assert.match(columns.stdout, /\nepoch\s+TIMESTAMP WITH TIME ZONE\s+false\s+Start time of the scrape/);
    const bare = await dbCli("columns", "--format", "json", "servers");
    assert.equal((JSON.parse(bare.stdout) as ColumnsReply).type, "view");

    const macros = await dbCli("macros", "--format", "json");
    assert.equal(macros.code, 0, macros.stderr);
    assert.ok(
      (JSON.parse(macros.stdout) as MacrosReply).macros.some(
        (m) => m.signature === "checks.server_007(ep_from, ep_to)",
      ),
    );
    const macroTable = await dbCli("macros", "--schema", "checks");
    assert.match(
      macroTable.stdout,
      /checks\.server_007\(ep_from, ep_to\)\s+table\s+server-007 Authentication Not Required/,
    );

    const plan = await dbCli("explain", "SELECT count(*) FROM hx.epochs");
    assert.equal(plan.code, 0, plan.stderr);
    assert.match(plan.stdout, /SEQ_SCAN|TABLE_SCAN/);
    assert.doesNotMatch(plan.stdout, /Total Time/);
    const analyzed = await dbCli(
      "explain",
      "--analyze",
      "-p",
      "0",
      "--",
      "SELECT count(*) FROM hx.epochs WHERE marker_seq > $1",
    );
    assert.equal(analyzed.code, 0, analyzed.stderr);
    assert.match(analyzed.stdout, /Total Time/);

    const write = await dbCli("explain", "--analyze", "DROP TABLE hx.epochs");
    assert.equal(write.code, 1);
    assert.match(write.stderr, /400: DROP statements are refused/);
    const badSchema = await dbCli("tables", "--schema", "nope");
    assert.equal(badSchema.code, 1);
    assert.match(badSchema.stderr, /400: schema must be one of hx, main, checks, contexts/);

    const typo = await runNatsmon(["db", "tables", "--server", url, "--system", "typo"]);
    assert.equal(typo.code, 1);
    assert.equal(
      typo.stderr,
      'natsmon: no node serves system "typo" (db.tables has no responder); ' +
        "`natsmon systems` lists the systems on this bus\n",
    );
  });

  test("natsmon db: a bad --system is a usage error before connecting; errors print whole; a closed pipe ends quietly", async () => {
    // Nothing listens on port 1: a usage error must come before any connection attempt.
    const commands = [
      ["db", "tables"],
      ["query", "SELECT 1"],
      ["backup", "--out", join(dir.path, "never.duckdb")],
    ];
    for (const [system, command] of [
      ["a.b", commands[0]!],
      ["*", commands[1]!],
      ["", commands[2]!],
    ] as const) {
      const bad = await runNatsmon([...command, "--server", "nats://127.0.0.1:1", "--system", system]);
      assert.equal(bad.code, 2, `${command[0]} ${system}: ${bad.stderr}`);
      assert.match(bad.stderr, /argument .* is invalid\. expected a system id/);
    }
    // An empty --schema is sent as given, and refused by the node, not dropped.
    const empty = await dbCli("tables", "--schema", "");
    assert.equal(empty.code, 1);
    assert.match(empty.stderr, /400: schema must be one of/);
    // DuckDB's message spans lines: the line and its caret come through, as with `natsmon query`.
    const typo = await dbCli("explain", "SELECT 1\nFROM hx.nope");
    assert.equal(typo.code, 1);
    assert.match(typo.stderr, /^natsmon: 400: Catalog Error: Table with name nope does not exist!/);
    assert.match(typo.stderr, /\nLINE 2: FROM hx\.nope\n +\^/);
    // A reader that stops early (`| head`): the reply is larger than a pipe holds.
    const [command, ...argv] = natsmonArgv(dbArgs("macros", "--format", "json"));
    const child = spawn(command!, argv, { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    await once(child.stdout, "data");
    child.stdout.destroy();
    const [code] = (await once(child, "exit")) as [number];
    assert.equal(stderr, "");
    assert.equal(code, 0);
  });
});

test("every discovery endpoint answers 503 with the reason while the catalog will not open", async () => {
  await using dir = await tempDir();
  await writeFile(join(dir.path, "local.duckdb"), "this is not a DuckDB file, it is garbage".repeat(200));
  await using node = spawnNatsmon(["run", "--data-dir", dir.path], { NATSMON_SINK_EMBEDDED_PORT: "-1" });
  const url = await node.waitForUrl();
  const nc = await connect({ servers: url });
  try {
    const requests: [string, unknown][] = [
      [subjects.dbExplain, { sql: "SELECT 1" }],
      [subjects.dbExplain, { sql: "SELECT 1", analyze: true }],
      [subjects.dbSchemas, {}],
      [subjects.dbTables, {}],
      [subjects.dbColumns, { schema: "hx", table: "epochs" }],
      [subjects.dbMacros, {}],
    ];
    for (const [subject, body] of requests) {
      const r = await ask(nc, subject, body);
      assert.equal(r.code, "503", subject);
      assert.match(r.error ?? "", /catalog of system local is not open: /);
    }
    const cli = await runNatsmon(["db", "schemas", "--server", url]);
    assert.equal(cli.code, 1);
    assert.match(cli.stderr, /503: catalog of system local is not open/);
  } finally {
    await nc.close();
  }
});
