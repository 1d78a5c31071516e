/**
 * One cut across a backup's tables. `natsmon backup` copies each table with its own
 * db.backup.stream request, each a snapshot of its own moment, while the node goes on
 * folding epochs and applying retention. Two things can then reach some tables and not
 * others, and are undone here, in the backup file, once every table is copied:
 *
 * - Retention ran on the node during the copy. Tables copied before it hold the epochs it
 *   removed (and their identities, _opts rows and addresses), tables copied after it do
 *   not: a stats row whose server identity is gone, an epoch half there. The file gets the
 *   same retention (retention.ts's own deletions), cut just before the node's oldest epoch
 *   after the copy: the node's own cutoff lay between the newest epoch it removed and that
 *   one, where no epoch, _opts row or address falls, so the rows removed are the node's.
 * - An epoch was folded during the copy with a start time at or before the pinned end (a
 *   scraper whose clock is behind another's, a clock stepped back): the window, pinned by
 *   time, lets it into the tables copied after its fold. hx.epochs.marker_seq orders folds:
 *   the node names the epochs whose commit marker came after the newest one at pinning time,
 *   and their rows leave every table, _opts rows included.
 *   One such epoch cannot be undone: stamped before the window's start, its _opts row can
 *   have become the row in force at the start in a table copied after its fold, and the row
 *   it displaced was never sent. That fails the backup (run it again: the epoch is then
 *   folded before the window is pinned, and the copy is one cut again).
 *
 * Last, the _ident and _opts tables are scoped to the window again over the rows left, so
 * identities only removed rows referred to go too.
 *
 * What remains is the catalog as it stood when the window was pinned, less what retention
 * removed before the copy ended. main.ips is copied whole, as of its own request (the
 * spec's window does not cut it): it can hold addresses of epochs folded during the copy.
 */
import type { DuckDBConnection } from "@duckdb/node-api";
import { backupStatement, describeBackupSchema, type BackupSchema } from "./backup.ts";
import { EPOCH_TEXT_FORMAT } from "./epoch-bound.ts";
import { removeOlderThan, type RetentionResult } from "./retention.ts";

/** What the backup learnt from the node, before and after copying the tables. */
export interface BackupCut {
  /** Epochs (RFC 3339) folded after the window was pinned with a start time at or before its end. */
  readonly lateEpochs: readonly string[];
  /**
   * Set when retention removed epochs on the node during the copy: a microsecond before the
   * node's oldest epoch after it (RFC 3339), or "infinity" when it holds none.
   */
  readonly retentionCutoff: string | undefined;
  /** The window every table was copied with (the request's start_epoch and end_epoch). */
  readonly window: { readonly start?: string | undefined; readonly end?: string | undefined };
}

export interface ReconcileResult {
  /** Removed as the node's retention removed them during the copy. */
  readonly retention: RetentionResult;
  /** Epochs folded after the window was pinned, left out, and the rows that went with them. */
  readonly late: { readonly epochs: number; readonly rows: number };
  /** _ident and _opts rows nothing left in the file refers to any more, left out too. */
  readonly unreferenced: number;
}

/** Brings the backup's tables to one cut (see the file comment), inside the caller's transaction. */
export async function reconcileBackup(con: DuckDBConnection, cut: BackupCut): Promise<ReconcileResult> {
  const retention =
    cut.retentionCutoff === undefined
      ? { epochs: 0, rows: 0, identities: 0, ips: 0 }
      : (await removeOlderThan(con, cut.retentionCutoff)).result;
  const removed = retention.rows + retention.epochs + retention.identities + retention.ips > 0;
  // The usual backup, with nothing under its window changed: nothing to read or rescope.
  if (!removed && cut.lateEpochs.length === 0)
    return { retention, late: { epochs: 0, rows: 0 }, unreferenced: 0 };
  const schema = await describeBackupSchema(con);
  const late = await dropLateEpochs(con, schema, cut.lateEpochs, cut.window.start);
  // Over tables that were one cut already, rescoping removes nothing (each is the node's own
  // selection for the window): it runs only once rows have gone.
  const unreferenced = removed || late.rows > 0 ? await rescope(con, schema, cut.window) : 0;
  return { retention, late, unreferenced };
}

/**
 * Scopes the _ident and _opts tables to the window again, now over the file's rows, with the
 * node's own statements (backup.ts): an identity stays when a row left refers to it, an _opts
 * row when its identity stays and it is in force in the window. Over a file whose tables
 * are one cut already this removes nothing; after the steps above it removes the identities
 * only removed epochs referred to (the node no longer sends them, or never did).
 */
async function rescope(
  con: DuckDBConnection,
  schema: BackupSchema,
  window: BackupCut["window"],
): Promise<number> {
  if (window.start === undefined && window.end === undefined) return 0;
  let rows = 0;
  for (const kind of schema.kinds) {
    for (const role of ["ident", "opts"] as const) {
      const { sql, params } = backupStatement(schema, {
        schema: "hx",
        table: `${kind.name}_${role}`,
        startEpoch: window.start,
        endEpoch: window.end,
      });
      const pk = kind.pk;
      const match = role === "ident" ? `s.${pk} = t.${pk}` : `s.${pk} = t.${pk} AND s.epoch = t.epoch`;
      const deleted = await con.runAndReadAll(
        `DELETE FROM hx.${kind.name}_${role} t WHERE NOT EXISTS (SELECT 1 FROM (${sql}) s WHERE ${match})`,
        [...params],
      );
      rows += Number(deleted.getRowsJS()[0]?.[0] ?? 0);
    }
  }
  return rows;
}

/**
 * Leaves out the rows of `late` epochs from every table with an `epoch` column, hx.epochs
 * and _opts included. Throws when one of them, stamped before `start`, put an _opts row in
 * force at the start (see the file comment).
 */
async function dropLateEpochs(
  con: DuckDBConnection,
  schema: BackupSchema,
  late: readonly string[],
  start: string | undefined,
): Promise<ReconcileResult["late"]> {
  if (late.length === 0) return { epochs: 0, rows: 0 };
  await con.run("CREATE OR REPLACE TEMP TABLE late_epochs (epoch TIMESTAMPTZ PRIMARY KEY)");
  for (const epoch of late) await con.run("INSERT INTO late_epochs VALUES ($1::TIMESTAMPTZ)", [epoch]);
  const isLate = "epoch IN (SELECT epoch FROM temp.late_epochs)";
  const tables = [...schema.tables.values()].filter((t) => t.schema === "hx" && t.hasEpoch);
  if (start !== undefined) {
    for (const { name } of tables.filter((t) => t.name.endsWith("_opts"))) {
      const [[epoch]] = (
        await con.runAndReadAll(
          `SELECT strftime(min(epoch), '${EPOCH_TEXT_FORMAT}') FROM hx.${name}
            WHERE ${isLate} AND epoch < $1::TIMESTAMPTZ`,
          [start],
        )
      ).getRowsJS() as [[string | null]];
      if (epoch !== null) {
        throw new Error(
          `an epoch stamped ${epoch}, before the window's start ${start}, was folded while the backup ` +
            `ran (do the scrapers' clocks agree?), and its hx.${name} row became the one in force at ` +
            "the start in place of the row the window was pinned with; run the backup again, which " +
            "pins the window after that epoch",
        );
      }
    }
  }
  // Counted by start time: a late epoch folded after hx.epochs was copied still names its rows.
  const epochs = new Set<string>();
  let rows = 0;
  for (const { name } of tables) {
    const deleted = (
      await con.runAndReadAll(`DELETE FROM hx.${name} WHERE ${isLate} RETURNING epoch`)
    ).getRowsJS() as [unknown][];
    rows += deleted.length;
    for (const [epoch] of deleted) epochs.add(String(epoch));
  }
  await con.run("DROP TABLE temp.late_epochs");
  return { epochs: epochs.size, rows };
}
