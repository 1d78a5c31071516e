import type { NatsConnection } from "@nats-io/nats-core";
import { setImmediate } from "node:timers/promises";
import { resolve } from "node:path";
import type { Command } from "commander";
import type { RecordBatch, Schema } from "apache-arrow";
import { END_OF_STREAM, ipcRowCount } from "../lib/index.ts";
import { STREAM_COMPRESSIONS, systemSubjects } from "../protocol/index.ts";
import type { QueryStreamRequest, StreamCompression } from "../protocol/index.ts";
import { ErrorCode, MonError } from "../domain/index.ts";
import { batchReaders, isNumericField } from "./arrow-values.ts";
import { connectClient, fail, withClientOptions, type ClientOptions } from "./client.ts";
import { resolveSystem } from "./discover.ts";
import { parseParams, readSql } from "./input.ts";
import { arrowWithoutStream, queryBuffered, QueryFailed } from "./query-fallback.ts";
import { outputProblem } from "./backup-output.ts";
import { openOutput, progressOn, type Output } from "./query-output.ts";
import { resultWriter, type TextFormat } from "./result-writers.ts";
import { catchInterrupts, Interrupted, untilAborted } from "./stop-signal.ts";
import {
  NoResponderError,
  PublishRefusedError,
  readArrowStream,
  StreamFailedError,
  StreamRefusedError,
  type ArrowStreamReader,
} from "./stream-client.ts";
import { timeoutOption } from "./timeout-option.ts";
import { systemOption } from "./system-option.ts";

const FORMATS = ["table", "csv", "json", "arrow"] as const;
type Format = (typeof FORMATS)[number];

interface QueryOptions extends ClientOptions {
  system?: string;
  format: Format;
  out?: string;
  param?: string[];
  compression?: StreamCompression;
  timeout: number;
}

/**
 * `natsmon query SQL`: one read-only statement over db.query.stream, written as it arrives
 * as a table, CSV, JSON or the Arrow IPC stream itself; over db.query (buffered) when the
 * system has no streaming responder, with a notice on stderr.
 */
export function queryCommand(program: Command): void {
  withClientOptions(
    program
      .command("query")
      .description("run a read-only SQL statement against a system's catalog")
      .argument("[sql]", "the statement; `-` or omitted: read it from stdin")
      .addOption(systemOption("system to query"))
      .option("-f, --format <format>", "table, csv, json or arrow (Arrow IPC stream bytes)", "table")
      .option("-o, --out <file>", "write the result to this file instead of stdout (replaced on success)")
      .option("-p, --param <value...>", "positional parameters ($1, $2, …), as JSON values or strings")
      .option(
        "--compression <codec>",
        "chunk compression to ask for: none, lz4 or zstd (default: the server's)",
      )
      .addOption(timeoutOption("how long to wait for the answer (streaming: for each chunk)")),
  ).action((sqlArg: string | undefined, options: QueryOptions) => runQuery(sqlArg, options));
}

async function runQuery(sqlArg: string | undefined, options: QueryOptions): Promise<void> {
  if (!FORMATS.includes(options.format)) {
    fail(`--format must be table, csv, json or arrow, not ${options.format}`, 2);
    return;
  }
  if (options.compression && !STREAM_COMPRESSIONS.includes(options.compression)) {
    fail(`--compression must be none, lz4 or zstd, not ${options.compression}`, 2);
    return;
  }
  if (options.out !== undefined) {
    const problem = await outputProblem(options.out, resolve(options.out), `result.${options.format}`);
    if (problem) {
      fail(problem, 2);
      return;
    }
  }
  const sql = await readSql(sqlArg);
  if (sql === undefined) return;
  const parsed = parseParams(options.param);
  if (parsed === undefined) return;
  const { params } = parsed;
  const nc = await connectClient(options);
  const output = openOutput(options.out);
  using interrupts = catchInterrupts();
  const { signal } = interrupts;
  try {
    // A signal ends the wait at once, whatever the query is waiting for; a request left
    // waiting ends when the connection closes (finally).
    await untilAborted(answer(nc, sql, params, options, output, signal), signal);
    await output.close();
  } catch (err) {
    await output.discard();
    report(signal.aborted ? signal.reason : err, options.out);
  } finally {
    await nc.close();
  }
}

/** Errors the server reported (or the stream's own) print as code and description. */
function report(err: unknown, out: string | undefined): void {
  if (err instanceof Interrupted) fail(`${err.message}${out ? `; ${out} untouched` : ""}`, err.exitCode);
  else if (err instanceof StreamFailedError) fail(`${err.trailer.code}: ${err.trailer.description}`);
  else if (err instanceof QueryFailed || err instanceof PublishRefusedError) fail(err.message);
  else if (err instanceof MonError) fail(`${err.code}: ${err.message}`);
  else throw err;
}

async function answer(
  nc: NatsConnection,
  sql: string,
  params: unknown[] | undefined,
  options: QueryOptions,
  output: Output,
  signal: AbortSignal,
): Promise<void> {
  const system = await resolveSystem(nc, options.system);
  const request: QueryStreamRequest = {
    sql,
    ...(params ? { params } : {}),
    // Arrow output passes the chunks through as they came, so ask for its compression
    // (none unless given: any Arrow reader can read that without codecs).
    ...(options.compression || options.format === "arrow"
      ? { compression: options.compression ?? "none" }
      : {}),
  };
  try {
    await streamed(nc, system, request, options, output, signal);
  } catch (err) {
    // No streaming responder: none at all, or a 503 before any chunk (from the node of a
    // system that cannot stream now, or from any node for a system no node serves). db.query
    // then answers, or says why it cannot.
    const refused = err instanceof StreamRefusedError && err.trailer.code === String(ErrorCode.Unavailable);
    if (!(err instanceof NoResponderError) && !refused) throw err;
    if (options.format === "arrow") throw refused ? err : await arrowWithoutStream(nc, system);
    await queryBuffered(
      nc,
      system,
      request,
      {
        format: options.format,
        timeoutMs: options.timeout,
        ...(refused ? { streamRefusal: `${err.trailer.code}: ${err.trailer.description}` } : {}),
      },
      output,
    );
  }
}

/** db.query.stream: each batch is written out as it arrives; the trailer's row count is checked. */
async function streamed(
  nc: NatsConnection,
  system: string,
  request: QueryStreamRequest,
  options: QueryOptions,
  output: Output,
  signal: AbortSignal,
): Promise<void> {
  const progress = progressOn();
  let received = 0;
  try {
    const stream = await readArrowStream(nc, systemSubjects(system).dbQueryStream, request, {
      timeoutMs: options.timeout,
      onProgress: (p) => (received = p.bytes),
      // A signal cancels the stream on the server rather than leave it to the ack timeout.
      signal,
    });
    if (options.format === "arrow") {
      await passThrough(stream, output, (rows) => progress.update(rows, received));
      return;
    }
    const sink = textSink(options.format, output);
    let rows = 0;
    await sink.begin(stream.schema);
    for await (const batch of stream) {
      await sink.batch(batch);
      rows += batch.numRows;
      progress.update(rows, received);
      // The reader is gone (`| head`): leaving the loop cancels the stream on the server.
      if (output.closed) return;
    }
    if (stream.totals && stream.totals.rows !== rows) {
      throw new QueryFailed(`500: the stream announced ${stream.totals.rows} rows and delivered ${rows}`);
    }
    await sink.end();
  } finally {
    progress.done();
  }
}

interface BatchSink {
  begin(schema: Schema): Promise<void>;
  batch(batch: RecordBatch): Promise<void>;
  end(): Promise<void>;
}

/**
 * Rows formatted between two turns of the event loop. A chunk can hold tens of thousands
 * of rows; formatting them in one go would leave the bus connection unread for that long,
 * and the server, whose chunks pile up unread, drops a connection that falls too far
 * behind (nats-server's slow-consumer limit).
 */
const ROWS_PER_TURN = 4096;

function textSink(format: TextFormat, output: Output): BatchSink {
  const writer = resultWriter(format);
  return {
    begin: (schema) =>
      output.write(
        writer.begin(
          schema.fields.map((f) => f.name),
          schema.fields.map(isNumericField),
        ),
      ),
    async batch(batch) {
      const readers = batchReaders(batch);
      for (let from = 0; from < batch.numRows; from += ROWS_PER_TURN) {
        if (from > 0) await setImmediate();
        await output.write(writer.rows(readers, from, Math.min(from + ROWS_PER_TURN, batch.numRows)));
      }
    },
    end: () => output.write(writer.end()),
  };
}

/**
 * `--format arrow`: the chunks' bytes written as they arrive, neither decoded nor
 * re-encoded; with the end-of-stream marker they form one Arrow IPC stream. The rows so
 * far, for the progress line, come from each chunk's metadata.
 */
async function passThrough(
  stream: ArrowStreamReader,
  output: Output,
  onRows: (rows: number) => void,
): Promise<void> {
  await output.write(stream.schemaMessage);
  let chunks = 1;
  let rows = 0;
  for await (const chunk of stream.chunks()) {
    await output.write(chunk);
    chunks++;
    rows += ipcRowCount(chunk);
    onRows(rows);
    if (output.closed) return;
  }
  if (stream.totals && stream.totals.chunks !== chunks) {
    throw new QueryFailed(`500: the stream announced ${stream.totals.chunks} chunks and delivered ${chunks}`);
  }
  await output.write(END_OF_STREAM);
}
