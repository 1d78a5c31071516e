/**
 * What `natsmon backup` writes into its temporary file, in order: the tables (DDL and
 * comments), each table's rows from one db.backup.stream request, then the views. Anything
 * that would leave the file different from the node's catalog throws, so that no file is
 * kept under the name.
 */
import type { NatsConnection } from "@nats-io/nats-core";
import type { BackupFile } from "../catalog/index.ts";
import type { SystemSubjects } from "../protocol/index.ts";
import {
  commentStatements,
  nodeAfterCopy,
  schemaStatements,
  type EpochWindow,
  type PinnedWindow,
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

/**
 * One db.backup.stream request to `subject`, its batches appended as they come. Throws when
 * the rows received differ from the end trailer's count: the table would not be the node's.
 */
export async function copyTable(
  nc: NatsConnection,
  subject: string,
  file: BackupFile,
  table: PlannedTable,
  window: EpochWindow,
  progress: BackupProgress,
  options: CopyTableOptions,
): Promise<void> {
  const name = `${table.schema}.${table.name}`;
  progress.startTable(name);
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
    let rows = 0;
    for await (const batch of stream) {
      await appender.append(batch);
      rows += batch.numRows;
    }
    const totals = stream.totals;
    if (totals?.rows !== rows) {
      throw new Error(
        `${name}: the node announced ${totals?.rows ?? "no"} rows and ${rows} arrived; the copy would differ`,
      );
    }
    await appender.finish();
    progress.endTable(rows, totals.bytes);
  } catch (err) {
    appender.abandon();
    throw err;
  }
}

/**
 * Once every table is copied: asks the node what changed under the window (nodeAfterCopy),
 * and brings the file to one cut (catalog/backup-reconcile.ts): what retention removed on
 * the node during the copy, and epochs folded after the window was pinned, leave every
 * table. Answers the lines telling the user what was left out, none when nothing was.
 */
export async function cutAcrossTables(
  nc: NatsConnection,
  subjects: SystemSubjects,
  file: BackupFile,
  window: PinnedWindow,
  timeoutMs: number,
): Promise<string[]> {
  const now = await nodeAfterCopy(nc, subjects, window, timeoutMs);
  const { retention, late, unreferenced } = await file.reconcile({
    retentionCutoff: now.oldest !== window.oldest ? now.cutoff : undefined,
    lateEpochs: now.late,
    window: { start: window.start, end: window.end },
  });
  const lines: string[] = [];
  if (retention.rows + retention.epochs + retention.identities + retention.ips > 0) {
    lines.push(
      `retention ran on the node during the backup (its oldest epoch is now ${now.oldest ?? "none"}): ` +
        "what it removed is left out of the tables copied before it too, as on the node " +
        `(${retention.rows + retention.epochs} rows, ${retention.identities} identities, ${retention.ips} addresses)`,
    );
  }
  if (late.rows > 0) {
    lines.push(
      `${late.epochs} epochs stamped at or before the window's end were folded during the backup ` +
        "(do the scrapers' clocks agree?); they are left out, with " +
        `${late.rows} rows, so that every table is cut at the epochs folded when the window was pinned`,
    );
  }
  if (unreferenced > 0) {
    lines.push(
      `${unreferenced} _ident and _opts rows that only the epochs left out referred to went with them`,
    );
  }
  return lines;
}

/**
 * Recreates the views from their definitions; a view over another view waits for it, so
 * the definitions are retried until a round creates none. Throws, naming every view left
 * and DuckDB's reason, when one cannot be made: the backup would not read like the catalog.
 */
export async function createViews(file: BackupFile, views: readonly PlannedView[]): Promise<void> {
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
  if (errors.size > 0) {
    throw new Error(
      [...errors].map(([name, message]) => `view ${name} cannot be recreated: ${message}`).join("; "),
    );
  }
}
