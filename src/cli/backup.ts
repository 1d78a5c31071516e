import { rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import type { Command } from "commander";
import type { NatsConnection } from "@nats-io/nats-core";
import { createBackupFile, type BackupFile } from "../catalog/index.ts";
import { STREAM_COMPRESSIONS, systemSubjects, type SystemSubjects } from "../protocol/index.ts";
import {
  commentStatements,
  pinWindow,
  planBackup,
  resolveTime,
  schemaStatements,
  windowProblem,
  type EpochWindow,
  type PlannedTable,
  type PlannedView,
} from "./backup-plan.ts";
import { BackupProgress, size } from "./backup-progress.ts";
import { connectClient, fail, withClientOptions, type ClientOptions } from "./client.ts";
import { resolveSystem } from "./discover.ts";
import { readArrowStream } from "./stream-client.ts";

interface BackupOptions extends ClientOptions {
  system?: string;
  out: string;
  since?: string;
  until?: string;
  force?: boolean;
  compression?: string;
  timeout: string;
}

/** Exit codes of a backup stopped by a signal, as a shell reports them. */
const SIGNAL_EXIT: Record<string, number> = { SIGINT: 130, SIGTERM: 143 };

/**
 * `natsmon backup --out FILE`: a local DuckDB copy of a system's catalog, built over the
 * bus. The window is resolved once, the schema copied from the server's DDL, then each table
 * streamed with one db.backup.stream request. The file appears only when complete: rows go
 * to a temporary file next to FILE, renamed on success and removed on any failure or signal.
 */
export function backupCommand(program: Command): void {
  withClientOptions(
    program
      .command("backup")
      .description("copy a system's catalog into a local DuckDB file (db.backup.stream)")
      .requiredOption("-o, --out <file>", "the DuckDB file to write")
      .option("--system <id>", "system to back up (default: the only one on the bus)")
      .option("--since <time>", "first epoch: RFC 3339, or a duration before now such as 24h")
      .option("--until <time>", "last epoch: RFC 3339, or a duration before now (default: the newest)")
      .option("--force", "replace FILE when it exists")
      .option(
        "--compression <codec>",
        `chunk compression: ${STREAM_COMPRESSIONS.join(", ")} (default: the server's)`,
      )
      .option("--timeout <ms>", "how long to wait for each answer", "60000"),
  ).action((options: BackupOptions) => runBackup(options));
}

async function runBackup(options: BackupOptions): Promise<void> {
  const out = resolve(options.out);
  const now = new Date();
  let since: string | undefined;
  let until: string | undefined;
  try {
    since = options.since === undefined ? undefined : resolveTime("--since", options.since, now);
    until = options.until === undefined ? undefined : resolveTime("--until", options.until, now);
  } catch (err) {
    fail((err as Error).message, 2);
    return;
  }
  const problem = windowProblem({ since, until }, now);
  if (problem) {
    fail(problem, 2);
    return;
  }
  if (
    options.compression !== undefined &&
    !(STREAM_COMPRESSIONS as readonly string[]).includes(options.compression)
  ) {
    fail(`--compression must be one of ${STREAM_COMPRESSIONS.join(", ")}`, 2);
    return;
  }
  if (!options.force && (await exists(out))) {
    fail(`${out} exists; choose another --out or add --force to replace it`, 2);
    return;
  }

  const timeoutMs = Number(options.timeout);
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0) {
    fail(`--timeout must be a positive number of milliseconds, not ${options.timeout}`, 2);
    return;
  }

  const temp = join(dirname(out), `.${basename(out)}.${process.pid}.partial`);
  const nc = await connectClient(options);
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (!stop.signal.aborted) stop.abort(new Interrupted(signal));
  };
  // Kept for the whole run (not once): a second Ctrl-C must not kill the process before it
  // has removed the temporary file.
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  let file: BackupFile | undefined;
  let progress: BackupProgress | undefined;
  try {
    const system = await resolveSystem(nc, options.system);
    const subjects = systemSubjects(system);
    const window = await pinWindow(nc, subjects, { since, until }, now);
    const plan = await planBackup(nc, subjects);
    stop.signal.throwIfAborted();
    process.stderr.write(
      `backing up system ${system}: ${plan.tables.length} tables, ${window.epochs} epochs` +
        ` (${window.start ?? "first"} .. ${window.end ?? "last"}) into ${out}\n`,
    );
    file = await createBackupFile(temp);
    await createTables(file, plan.tables);
    progress = new BackupProgress(process.stderr, plan.tables.length);
    for (const table of plan.tables) {
      stop.signal.throwIfAborted();
      await copyTable(nc, subjects, file, table, window, progress, {
        timeoutMs,
        signal: stop.signal,
        ...(options.compression ? { compression: options.compression } : {}),
      });
    }
    const skipped = await createViews(file, plan.views);
    stop.signal.throwIfAborted();
    await file.close();
    if (!options.force && (await exists(out))) throw new Error(`${out} appeared meanwhile; not replaced`);
    await rename(temp, out);
    const totals = progress.totals;
    for (const line of skipped) process.stderr.write(`natsmon: ${line}\n`);
    process.stdout.write(
      `${out}: ${totals.tables} tables, ${plan.views.length - skipped.length} views, ` +
        `${totals.rows.toLocaleString("en-US")} rows, ${size(totals.bytes)} streamed in ` +
        `${(totals.ms / 1000).toFixed(1)} s\n`,
    );
  } catch (err) {
    progress?.interrupt();
    await file?.[Symbol.asyncDispose]();
    await removeTemp(temp);
    const reason: unknown = stop.signal.aborted ? stop.signal.reason : err;
    if (reason instanceof Interrupted) {
      fail(
        `interrupted by ${reason.signal}; no backup written (${out} untouched)`,
        SIGNAL_EXIT[reason.signal] ?? 1,
      );
    } else {
      fail(`backup failed, no backup written: ${reason instanceof Error ? reason.message : String(reason)}`);
    }
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await nc.close();
  }
}

class Interrupted extends Error {
  readonly signal: NodeJS.Signals;
  constructor(signal: NodeJS.Signals) {
    super(`interrupted by ${signal}`);
    this.signal = signal;
  }
}

async function createTables(file: BackupFile, tables: readonly PlannedTable[]): Promise<void> {
  const schemas = schemaStatements(tables);
  if (schemas) await file.run(schemas);
  for (const table of tables) {
    await file.run(table.ddl);
    const comments = commentStatements("TABLE", table);
    if (comments) await file.run(comments);
  }
}

/** One db.backup.stream request, its batches appended as they come. */
async function copyTable(
  nc: NatsConnection,
  subjects: SystemSubjects,
  file: BackupFile,
  table: PlannedTable,
  window: EpochWindow,
  progress: BackupProgress,
  options: { timeoutMs: number; signal: AbortSignal; compression?: string },
): Promise<void> {
  progress.startTable(`${table.schema}.${table.name}`);
  const appender = await file.appendTo(table.schema, table.name);
  try {
    const request = {
      schema: table.schema,
      table: table.name,
      ...(window.start !== undefined ? { start_epoch: window.start } : {}),
      ...(window.end !== undefined ? { end_epoch: window.end } : {}),
      ...(options.compression ? { compression: options.compression } : {}),
    };
    const stream = await untilAborted(
      readArrowStream(nc, subjects.dbBackupStream, request, {
        timeoutMs: options.timeoutMs,
        onProgress: (p) => progress.update(p.rows, p.bytes),
      }),
      options.signal,
    );
    for await (const batch of abortable(stream, options.signal)) await appender.append(batch);
    await appender.finish();
    progress.endTable(stream.totals?.rows ?? 0, stream.totals?.bytes ?? 0);
  } catch (err) {
    appender.abandon();
    throw err;
  }
}

/**
 * Recreates the views from their definitions; a view over another view waits for it, so
 * the definitions are retried until a round creates none. Returns what could not be made.
 */
async function createViews(file: BackupFile, views: readonly PlannedView[]): Promise<string[]> {
  let pending = [...views];
  let errors = new Map<string, string>();
  while (pending.length > 0) {
    const failed: PlannedView[] = [];
    errors = new Map();
    for (const view of pending) {
      try {
        await file.run(view.ddl);
        const comments = commentStatements("VIEW", view);
        if (comments) await file.run(comments);
      } catch (err) {
        failed.push(view);
        errors.set(`${view.schema}.${view.name}`, (err as Error).message.split("\n")[0] ?? "");
      }
    }
    if (failed.length === pending.length) break;
    pending = failed;
  }
  return [...errors].map(([name, message]) => `view ${name} not recreated: ${message}`);
}

/**
 * `promise`, or the signal's reason once it aborts first. A stream left waiting this way is
 * freed by the server when its acks stop coming (db.query-stream.ack-timeout).
 */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason as Error);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  return Promise.race([promise, aborted]).finally(() => {
    if (onAbort) signal.removeEventListener("abort", onAbort);
  });
}

/** Iterates `source` until `signal` aborts; returning early ends (cancels) the source. */
async function* abortable<T>(source: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason as Error);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  aborted.catch(() => undefined);
  try {
    for (;;) {
      const next = await Promise.race([iterator.next(), aborted]);
      if (next.done) return;
      yield next.value;
    }
  } finally {
    if (onAbort) signal.removeEventListener("abort", onAbort);
    // Tells the server to stop (a cancel on the ack subject) without waiting for it.
    void iterator.return?.()?.catch(() => undefined);
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** The temporary file and what DuckDB may have left beside it (its WAL, its spill directory). */
async function removeTemp(temp: string): Promise<void> {
  await Promise.all(
    [temp, `${temp}.wal`, `${temp}.tmp`].map((path) => rm(path, { force: true, recursive: true })),
  );
}
