import type { Command } from "commander";
import {
  systemSubjects,
  type ColumnsReply,
  type ExplainReply,
  type MacrosReply,
  type SchemasReply,
  type TablesReply,
} from "../protocol/index.ts";
import { fail, onSystem, withClientOptions, type ClientOptions } from "./client.ts";
import { printOut, requestEndpoint } from "./endpoint-request.ts";
import { parseParams, readSql } from "./input.ts";
import { renderTable } from "./table.ts";
import { timeoutOption } from "./timeout-option.ts";
import { systemOption } from "./system-option.ts";

interface DbOptions extends ClientOptions {
  system?: string;
  format: string;
  timeout: number;
  schema?: string;
}

type Subjects = ReturnType<typeof systemSubjects>;

/** One discovery subcommand: the request it sends and how its reply prints as a table. */
interface Discovery<R> {
  /** The endpoint, as named in messages. */
  endpoint: string;
  subject: (s: Subjects) => string;
  body: Record<string, unknown>;
  table: (reply: R) => string;
}

/**
 * `natsmon db schemas|tables|columns|macros|explain`: the catalog discovery endpoints over
 * the bus, printed as a table (explain: the plan text) or as the JSON reply.
 */
export function dbCommand(program: Command): void {
  const db = program
    .command("db")
    .description("discover a system's catalog: schemas, tables, columns, macros, plans");

  dbSubcommand(db, "schemas", "list the schemas with their table, view and macro counts").action(
    (options: DbOptions) =>
      ask<SchemasReply>(options, {
        endpoint: "db.schemas",
        subject: (s) => s.dbSchemas,
        body: {},
        table: (r) => renderTable(r.schemas, ["name", "tables", "views", "macros", "description"]),
      }),
  );

  dbSubcommand(db, "tables", "list tables and views")
    .option("--schema <schema>", "only this schema (hx, main, checks, contexts)")
    .action((options: DbOptions) =>
      ask<TablesReply>(options, {
        endpoint: "db.tables",
        subject: (s) => s.dbTables,
        body: options.schema === undefined ? {} : { schema: options.schema },
        table: (r) =>
          renderTable(
            r.tables.map((t) => ({
              table: `${t.schema}.${t.name}`,
              type: t.type,
              columns: t.column_count,
              rows: t.estimated_rows,
              comment: t.comment,
            })),
          ),
      }),
    );

  dbSubcommand(db, "columns", "list the columns of a table or view, with comments")
    .argument("<table>", "schema.table, or a table name in --schema (default hx)")
    .option("--schema <schema>", "schema of a bare table name", "hx")
    .action((table: string, options: DbOptions) => {
      const dot = table.indexOf(".");
      const schema = dot > 0 ? table.slice(0, dot) : options.schema;
      const name = dot > 0 ? table.slice(dot + 1) : table;
      return ask<ColumnsReply>(options, {
        endpoint: "db.columns",
        subject: (s) => s.dbColumns,
        body: { schema, table: name },
        table: (r) =>
          `${r.schema}.${r.table} (${r.type})${r.comment ? `: ${r.comment}` : ""}\n\n` +
          renderTable(r.columns, ["name", "data_type", "nullable", "default", "comment"]),
      });
    });

  dbSubcommand(db, "macros", "list macros with their signatures")
    .option("--schema <schema>", "only this schema (hx, main, checks, contexts)")
    .action((options: DbOptions) =>
      ask<MacrosReply>(options, {
        endpoint: "db.macros",
        subject: (s) => s.dbMacros,
        body: options.schema === undefined ? {} : { schema: options.schema },
        table: (r) =>
          renderTable(r.macros.map((m) => ({ signature: m.signature, type: m.type, comment: m.comment }))),
      }),
    );

  dbSubcommand(
    db,
    "explain",
    "show the plan of a read-only statement (with --analyze: run it, and show the plan timed)",
  )
    .argument("[sql]", "the statement; `-` or omitted: read it from stdin")
    .option("--analyze", "run the statement and show per-operator timing (EXPLAIN ANALYZE)")
    .option("-p, --param <value...>", "positional parameters ($1, $2, …), as JSON values or strings")
    .action(
      async (sqlArg: string | undefined, options: DbOptions & { analyze?: boolean; param?: string[] }) => {
        // Checked before connecting, as `natsmon query` does: none or empty is a usage error.
        const sql = await readSql(sqlArg);
        if (sql === undefined) return;
        const parsed = parseParams(options.param);
        if (parsed === undefined) return;
        const { params } = parsed;
        return ask<ExplainReply>(options, {
          endpoint: "db.explain",
          subject: (s) => s.dbExplain,
          body: { sql, analyze: options.analyze === true, ...(params ? { params } : {}) },
          table: (r) => r.plan.map((row) => row.explain_value.replace(/\n?$/, "\n")).join(""),
        });
      },
    );
}

function dbSubcommand(db: Command, name: string, description: string): Command {
  return withClientOptions(
    db
      .command(name)
      .description(description)
      .addOption(systemOption("system to ask"))
      .option("-f, --format <format>", "table or json", "table")
      .addOption(timeoutOption("how long to wait for the answer")),
  );
}

async function ask<R>(options: DbOptions, discovery: Discovery<R>): Promise<void> {
  if (!["table", "json"].includes(options.format)) {
    fail(`--format must be table or json, not ${options.format}`, 2);
    return;
  }
  await onSystem(options, async (nc, system) => {
    const reply = await requestEndpoint(
      nc,
      system,
      {
        endpoint: discovery.endpoint,
        subject: discovery.subject(systemSubjects(system)),
        body: discovery.body,
      },
      options.timeout,
    );
    if (reply === undefined) return;
    const answer = reply.json<R>();
    await printOut(
      options.format === "json" ? JSON.stringify(answer, null, 2) + "\n" : discovery.table(answer),
    );
  });
}
