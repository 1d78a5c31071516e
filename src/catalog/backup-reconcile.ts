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
 * - An epoch was folded during the copy with a start time inside the pinned window (a
 *   scraper whose clock is behind another's, a clock stepped back): the window, pinned by
 *   time, lets it into the tables copied after its fold. hx.epochs.marker_seq orders folds,
 *   so every epoch whose commit marker came after the newest one at pinning time is left
 *   out, with its rows, its _opts rows and the identities it introduced.
 *
 * Last, the _ident and _opts tables are scoped to the window again over the rows left.
 *
 * What remains is the catalog as it stood when the window was pinned, less what retention
 * removed before the copy ended. main.ips is copied whole, as of its own request (the
 * spec's window does not cut it); only retention's removals are applied to it here.
 */
import type { DuckDBConnection } from "@duckdb/node-api";
import { backupStatement, describeBackupSchema, type BackupSchema } from "./backup.ts";
import { removeOlderThan, type RetentionResult } from "./retention.ts";

/** What the backup learnt from the node, before and after copying the tables. */
export interface BackupCut {
  /** hx.epochs' newest marker_seq when the window was pinned, as text; undefined: no epoch then. */
  readonly pinnedSeq: string | undefined;
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
  const schema = await describeBackupSchema(con);
  const late =
    cut.pinnedSeq === undefined ? { epochs: 0, rows: 0 } : await dropLateEpochs(con, schema, cut.pinnedSeq);
  const unreferenced = await rescope(con, schema, cut.window);
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
 * Leaves out every epoch folded after `pinnedSeq`: the rows of epochs hx.epochs does not hold
 * at or before it (a late epoch folded after hx.epochs was copied is missing there but present
 * in the tables copied later), the _opts rows such an epoch brought, then the late hx.epochs
 * rows themselves. _opts rows older than the oldest epoch kept are the ones in force at the
 * window's start: they stay. Identities only late epochs showed go in `rescope`.
 */
async function dropLateEpochs(
  con: DuckDBConnection,
  schema: BackupSchema,
  pinnedSeq: string,
): Promise<ReconcileResult["late"]> {
  const kept = "SELECT epoch FROM hx.epochs WHERE marker_seq <= $1::UBIGINT";
  const lateOpts = `epoch >= (SELECT min(epoch) FROM (${kept})) AND epoch NOT IN (${kept})`;
  const tables = [...schema.tables.values()].filter(
    (t) => t.schema === "hx" && t.hasEpoch && t.name !== "epochs",
  );
  // Counted by start time: a late epoch missing from hx.epochs still names its rows.
  const epochs = new Set<string>();
  let rows = 0;
  const run = async (sql: string) => {
    const deleted = (await con.runAndReadAll(sql, [pinnedSeq])).getRowsJS() as [unknown][];
    rows += deleted.length;
    for (const [epoch] of deleted) epochs.add(String(epoch));
  };
  for (const { name } of tables) {
    await run(
      name.endsWith("_opts")
        ? `DELETE FROM hx.${name} WHERE ${lateOpts} RETURNING epoch`
        : `DELETE FROM hx.${name} WHERE epoch NOT IN (${kept}) RETURNING epoch`,
    );
  }
  await run("DELETE FROM hx.epochs WHERE marker_seq > $1::UBIGINT RETURNING epoch");
  return { epochs: epochs.size, rows };
}
