/**
 * What `natsmon backup` writes into its temporary file, in order: the tables (DDL and
 * comments), each table's rows from one db.backup.stream request, then the views.
 */
import type { NatsConnection } from "@nats-io/nats-core";
import type { BackupFile } from "../catalog/index.ts";
import {
  commentStatements,
  schemaStatements,
  type EpochWindow,
  type PlannedTable,
  type PlannedView,
} from "./backup-plan.ts";
import type { BackupProgress } from "./backup-progress.ts";
import { readArrowStream } from "./stream-client.ts";

export async function createTables(file: BackupFile, tables: readonly PlannedTable[]): Promise<void> {
  const schemas = schemaStatements(tables);
  if (schemas) await file.run(schemas);
  for (const table of tables) {
    await file.run(table.ddl);
    const comments = commentStatements("TABLE", table);
    if (comments) await file.run(comments);
  }
}

export interface CopyTableOptions {
  /** Longest wait for any one message of the stream (--timeout). */
  readonly timeoutMs: number;
  /** Aborts the read at once (Ctrl-C); it then throws the signal's reason. */
  readonly signal: AbortSignal;
  readonly compression?: string;
}

/** One db.backup.stream request to `subject`, its batches appended as they come. */
export async function copyTable(
  nc: NatsConnection,
  subject: string,
  file: BackupFile,
  table: PlannedTable,
  window: EpochWindow,
  progress: BackupProgress,
  options: CopyTableOptions,
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
    const stream = await readArrowStream(nc, subject, request, {
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      onProgress: (p) => progress.update(p.rows, p.bytes),
    });
    for await (const batch of stream) await appender.append(batch);
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
export async function createViews(file: BackupFile, views: readonly PlannedView[]): Promise<string[]> {
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
