import { resolve } from "node:path";
import type { Command } from "commander";
import type { NatsConnection } from "@nats-io/nats-core";
import { ALIGN_FIRING_SQL, createBackupFile, type BackupFile } from "../catalog/index.ts";
import { STREAM_COMPRESSIONS, systemSubjects } from "../protocol/index.ts";
import { copyTable, createTables, createViews, cutAcrossTables } from "./backup-copy.ts";
import { commitBackup, exists, outputProblem, removeTemp, tempPathFor } from "./backup-output.ts";
import { pinWindow, planBackup, resolveTime, windowProblem, wireWindow } from "./backup-plan.ts";
import { BackupProgress, size } from "./backup-progress.ts";
import { connectClient, fail, withClientOptions, type ClientOptions } from "./client.ts";
import { noNodeServes, resolveSystem } from "./discover.ts";
import { outliveClosedOutput } from "./outlive-closed-output.ts";
import { catchInterrupts, Interrupted, untilAborted } from "./stop-signal.ts";
import { NoResponderError } from "./stream-client.ts";
import { timeoutOption } from "./timeout-option.ts";
import { systemOption } from "./system-option.ts";

interface BackupOptions extends ClientOptions {
  system?: string;
  out: string;
  since?: string;
  until?: string;
  force?: boolean;
  compression?: string;
  timeout: number;
}

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
      .addOption(systemOption("system to back up"))
      .option("--since <time>", "first epoch: RFC 3339, or a duration before now such as 24h")
      .option("--until <time>", "last epoch: RFC 3339, or a duration before now (default: the newest)")
      .option("--force", "replace FILE when it exists")
      .option(
        "--compression <codec>",
        `chunk compression: ${STREAM_COMPRESSIONS.join(", ")} (default: the server's)`,
      )
      .addOption(timeoutOption("how long to wait for each answer, in milliseconds")),
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
  const outProblem = await outputProblem(options.out, out);
  if (outProblem) {
    fail(outProblem, 2);
    return;
  }
  if (!options.force && (await exists(out))) {
    fail(`${out} exists; choose another --out or add --force to replace it`, 2);
    return;
  }

  const timeoutMs = options.timeout;
  // From here on stdout and stderr only report on the backup: a reader gone (`| head`) or a
  // closed terminal must neither end it midway nor leave its temporary file behind.
  outliveClosedOutput();
  const temp = tempPathFor(out, process.pid);
  const nc = await connectClient(options);
  // Kept for the whole run: a second Ctrl-C must not kill the process before it has removed
  // the temporary file.
  using stop = catchInterrupts();
  let file: BackupFile | undefined;
  let progress: BackupProgress | undefined;
  try {
    // A request left waiting here ends when the connection closes (finally).
    const { system, window, plan } = await untilAborted(
      planRun(nc, options.system, wireWindow({ since, until }), now, timeoutMs),
      stop.signal,
    );
    const subject = systemSubjects(system).dbBackupStream;
    const cut = plan.tables.filter((t) => t.cutByWindow).length;
    process.stderr.write(
      `backing up system ${system}: ${plan.tables.length} tables, ${window.epochs} epochs` +
        ` (${window.start ?? "first"} .. ${window.end ?? "last"}) into ${out}\n` +
        (window.empty
          ? `no epoch was folded in the window when it was pinned: the ${cut} tables it cuts are ` +
            "backed up empty, so that epochs folded during the backup reach none of them\n"
          : ""),
    );
    file = await createBackupFile(temp);
    await createTables(file, plan.tables);
    progress = new BackupProgress(process.stderr, plan.tables.length);
    for (const table of plan.tables) {
      stop.signal.throwIfAborted();
      if (window.empty && table.cutByWindow) {
        progress.emptyTable(`${table.schema}.${table.name}`, "not asked (no epoch in the window)");
        continue;
      }
      await copyTable(nc, subject, file, table, window, progress, {
        timeoutMs,
        signal: stop.signal,
        ...(options.compression ? { compression: options.compression } : {}),
      });
    }
    progress.finishing(
      (window.empty ? "" : "asking the node what changed during the copy, ") +
        `recreating ${plan.views.length} views, writing ${out}`,
    );
    if (!window.empty) {
      // The tables were copied one request at a time while the node went on: one cut across them.
      const notes = await cutAcrossTables(nc, systemSubjects(system), file, window, timeoutMs);
      for (const line of notes) process.stderr.write(`natsmon: ${line}\n`);
    }
    // The node's firing set is its latest: the file's is that of its own last check run.
    if (plan.tables.some((t) => t.schema === "hx" && t.name === "findings_firing")) {
      await file.run(ALIGN_FIRING_SQL);
    }
    await createViews(file, plan.views);
    stop.signal.throwIfAborted();
    await commitBackup(file, out, { replace: options.force === true, signal: stop.signal });
    // FILE is complete from the rename on; a signal since then has nothing left to undo.
    const late: unknown = stop.signal.reason;
    if (late instanceof Interrupted) {
      process.stderr.write(`natsmon: ${late.signal} arrived once ${out} was complete; it is kept\n`);
    }
    const totals = progress.totals;
    process.stdout.write(
      `${out}: ${totals.tables} tables${window.empty ? ` (${cut} empty: no epoch in the window)` : ""}, ` +
        `${plan.views.length} views, ` +
        `${totals.rows.toLocaleString("en-US")} rows, ${size(totals.bytes)} streamed in ` +
        `${(totals.ms / 1000).toFixed(1)} s\n`,
    );
  } catch (err) {
    progress?.interrupt();
    await file?.[Symbol.asyncDispose]();
    await removeTemp(temp);
    const reason: unknown = stop.signal.aborted ? stop.signal.reason : err;
    if (reason instanceof Interrupted) {
      fail(`${reason.message}; no backup written (${out} untouched)`, reason.exitCode);
    } else {
      fail(`backup failed, no backup written: ${reason instanceof Error ? reason.message : String(reason)}`);
    }
  } finally {
    await nc.close();
  }
}

/** Everything learnt before the file is made: the system, the pinned window, the plan. */
async function planRun(
  nc: NatsConnection,
  given: string | undefined,
  window: { since?: string; until?: string },
  now: Date,
  timeoutMs: number,
) {
  const system = await resolveSystem(nc, given);
  const subjects = systemSubjects(system);
  try {
    const pinned = await pinWindow(nc, subjects, window, now, timeoutMs);
    const plan = await planBackup(nc, subjects, timeoutMs);
    return { system, window: pinned, plan };
  } catch (err) {
    // The first request to the system: nothing answering is a mistyped id or a stopped node.
    if (err instanceof NoResponderError) {
      throw new Error(noNodeServes(system, `${err.subject} has no responder`), { cause: err });
    }
    throw err;
  }
}
