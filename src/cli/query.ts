import { headers as natsHeaders, type Msg } from "@nats-io/nats-core";
import type { Command } from "commander";
import { ACCEPT, CSV_MEDIA_TYPE, systemSubjects } from "../protocol/index.ts";
import { connectClient, fail, withClientOptions, type ClientOptions } from "./client.ts";
import { resolveSystem } from "./discover.ts";
import { parseParam, readStdin } from "./input.ts";
import { renderTable } from "./table.ts";

interface QueryOptions extends ClientOptions {
  system?: string;
  format: "table" | "csv" | "json";
  param?: string[];
  timeout: string;
}

/** `natsmon query SQL`: one read-only statement over `db.query`, as a table, CSV or JSON. */
export function queryCommand(program: Command): void {
  withClientOptions(
    program
      .command("query")
      .description("run a read-only SQL statement against a system's catalog")
      .argument("[sql]", "the statement; read from stdin when omitted")
      .option("--system <id>", "system to query (default: the only one on the bus)")
      .option("-f, --format <format>", "table, csv or json", "table")
      .option("-p, --param <value...>", "positional parameters ($1, $2, …), as JSON values or strings")
      .option("--timeout <ms>", "how long to wait for the answer", "60000"),
  ).action(async (sqlArg: string | undefined, options: QueryOptions) => {
    if (!["table", "csv", "json"].includes(options.format)) {
      fail(`--format must be table, csv or json, not ${options.format}`, 2);
      return;
    }
    const sql = sqlArg ?? (await readStdin());
    const nc = await connectClient(options);
    try {
      const system = await resolveSystem(nc, options.system);
      const h = natsHeaders();
      if (options.format === "csv") h.set(ACCEPT, CSV_MEDIA_TYPE);
      const params = options.param?.map(parseParam);
      const body = JSON.stringify(params ? { sql, params } : { sql });
      let reply: Msg;
      try {
        reply = await nc.request(systemSubjects(system).dbQuery, body, {
          timeout: Number(options.timeout),
          headers: h,
        });
      } catch (err) {
        if ((err as { isNoResponders?: () => boolean }).isNoResponders?.()) {
          fail(`no catalog answers for system "${system}"; natsmon systems lists the reachable ones`);
          return;
        }
        throw err;
      }
      const code = reply.headers?.get("Nats-Service-Error-Code");
      if (code) {
        fail(`${code}: ${reply.headers?.get("Nats-Service-Error") ?? "error"}`);
        return;
      }
      if (options.format === "table") {
        process.stdout.write(renderTable(reply.json<Record<string, unknown>[]>()));
      } else {
        process.stdout.write(reply.string() + (options.format === "json" ? "\n" : ""));
      }
    } finally {
      await nc.close();
    }
  });
}
