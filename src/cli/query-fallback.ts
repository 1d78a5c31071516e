/**
 * `natsmon query` over db.query, for a system with no db.query.stream responder (an older
 * node): the whole result in one reply, capped at db.query-max-rows and rendered by
 * db.query's rules. When db.query has no responder either, no node serves the system.
 */
import { errors, headers as natsHeaders, type Msg, type NatsConnection } from "@nats-io/nats-core";
import {
  ACCEPT,
  CSV_MEDIA_TYPE,
  ServiceErrorHeader,
  systemSubjects,
  type QueryStreamRequest,
} from "../protocol/index.ts";
import { stringifyExact } from "../lib/index.ts";
import { parseCsvResult } from "./csv-cells.ts";
import { noNodeServes, systemListed } from "./discover.ts";
import type { Output } from "./query-output.ts";
import { arrayReaders, resultWriter, type TextFormat } from "./result-writers.ts";

/** A failure reported as it is: the server's `code: description`, or natsmon's own sentence. */
export class QueryFailed extends Error {}

/**
 * db.query: CSV (written as received, or read back for the table: it keeps the column
 * order) or JSON (written as received). The notice that the statement went to db.query is
 * printed once db.query has answered, so it never precedes a failure to find anyone.
 */
export async function queryBuffered(
  nc: NatsConnection,
  system: string,
  request: QueryStreamRequest,
  options: {
    format: TextFormat;
    timeoutMs: number;
    /** The stream's refusal (`503: …`), when a node answered db.query.stream with one. */
    streamRefusal?: string;
  },
  output: Output,
): Promise<void> {
  const streamOutcome =
    options.streamRefusal === undefined
      ? `system "${system}" has no db.query.stream responder`
      : `db.query.stream of system "${system}" answered ${options.streamRefusal}`;
  const h = natsHeaders();
  if (options.format !== "json") h.set(ACCEPT, CSV_MEDIA_TYPE);
  const body = stringifyExact(
    request.params ? { sql: request.sql, params: request.params } : { sql: request.sql },
  );
  let reply;
  try {
    reply = await nc.request(systemSubjects(system).dbQuery, body, {
      timeout: options.timeoutMs,
      headers: h,
    });
  } catch (err) {
    if (
      (err instanceof errors.RequestError && err.isNoResponders()) ||
      err instanceof errors.NoRespondersError
    ) {
      throw new QueryFailed(noNodeServes(system, "neither db.query.stream nor db.query has a responder"));
    }
    if (err instanceof errors.TimeoutError) {
      throw new QueryFailed(
        `no answer from db.query within ${options.timeoutMs} ms (${streamOutcome}, so the statement went to db.query)`,
      );
    }
    throw err;
  }
  // db.query's own error says what is wrong; the notice is for a result that came this way.
  const code = reply.headers?.get(ServiceErrorHeader.Code);
  if (code) throw new QueryFailed(`${code}: ${errorText(reply)}`);
  process.stderr.write(
    `natsmon: ${streamOutcome}; the result comes from db.query (buffered, capped at db.query-max-rows)\n`,
  );
  if (options.format === "table") {
    await output.write(csvTable(reply.string()));
  } else {
    await output.write(reply.data);
    if (options.format === "json") await output.write("\n");
  }
}

/**
 * A db.query error in full. The header holds the description on one line, cut at 1 kB;
 * when that is not the whole message (DuckDB's span lines: LINE 1: …), the server sends
 * it whole as the error's data, `{"message": …}`, as the stream's trailer carries it.
 */
export function errorText(reply: Msg): string {
  const header = reply.headers?.get(ServiceErrorHeader.Description) || "error";
  if (reply.data.length === 0) return header;
  try {
    const { message } = reply.json<{ message?: unknown }>();
    return typeof message === "string" && message !== "" ? message : header;
  } catch {
    return header;
  }
}

/**
 * `--format arrow` without a db.query.stream responder. db.query's reply has no Arrow types
 * to build the stream from, so nothing is sent to it; discovery tells an older node serving
 * the system apart from no node at all.
 */
export async function arrowWithoutStream(nc: NatsConnection, system: string): Promise<QueryFailed> {
  if (!(await systemListed(nc, system))) {
    return new QueryFailed(
      noNodeServes(system, "db.query.stream has no responder and discovery lists no such system"),
    );
  }
  return new QueryFailed(
    `--format arrow needs db.query.stream, and system "${system}" has no responder for it ` +
      "(an older node); --format table, csv or json fall back to db.query",
  );
}

/**
 * db.query's CSV reply as the table. The reply names no column types, so a column counts as
 * numeric when every value in it is a number's text (DECIMAL `12.340`, BIGINT past 2^53
 * included), which aligns it as the stream's types do.
 */
export function csvTable(csv: string): string {
  const { columns, rows } = parseCsvResult(csv);
  const numeric = columns.map((_, c) => {
    let any = false;
    for (const row of rows) {
      const cell = row[c] ?? null;
      if (cell === null) continue;
      if (typeof cell !== "number" && !(typeof cell === "string" && NUMBER_TEXT.test(cell))) return false;
      any = true;
    }
    return any;
  });
  const writer = resultWriter("table");
  return (
    writer.begin(columns, numeric) +
    writer.rows(arrayReaders(rows, columns.length), 0, rows.length) +
    writer.end()
  );
}

/** A decimal number's text, or DOUBLE's NaN and infinities as db.query writes them. */
const NUMBER_TEXT = /^(-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?|NaN|-?Infinity)$/;
