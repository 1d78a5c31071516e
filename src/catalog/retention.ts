import type { Catalog } from "./open-catalog.ts";

export interface RetentionResult {
  /** Epochs removed from hx.epochs. */
  epochs: number;
  /** Rows removed from stats and superseded _opts tables. */
  rows: number;
}

/**
 * Deletes every epoch older than `cutoff`: its hx.epochs row and its rows in every
 * per-epoch table, in one transaction on the writer, between folds (readers keep their
 * snapshot, so queries are not blocked). Identities stay (pks are stable for ever), and
 * for each entity the _opts row in force at the cutoff stays with every later one, so
 * the configuration of the epochs kept is still known.
 */
export async function applyRetention(catalog: Catalog, cutoff: Date): Promise<RetentionResult> {
  return catalog.withWriter(async ({ con }) => {
    const tables = (
      await con.runAndReadAll(
        `SELECT t.table_name,
                (SELECT c.column_name FROM duckdb_columns() c
                  WHERE c.schema_name = 'hx' AND c.table_name = t.table_name AND c.column_index = 1) AS pk
           FROM duckdb_tables() t
          WHERE t.schema_name = 'hx' AND t.table_name <> 'epochs'
            AND EXISTS (SELECT 1 FROM duckdb_columns() c
                         WHERE c.schema_name = 'hx' AND c.table_name = t.table_name AND c.column_name = 'epoch')`,
      )
    ).getRowsJS() as [string, string][];
    const at = cutoff.toISOString();
    await con.run("BEGIN TRANSACTION");
    try {
      let rows = 0;
      for (const [table, firstColumn] of tables) {
        const sql = table.endsWith("_opts")
          ? // Keep the newest row at or before the cutoff: it is still in force after it.
            `DELETE FROM hx.${table} o WHERE o.epoch < $1::TIMESTAMPTZ AND EXISTS (
               SELECT 1 FROM hx.${table} n WHERE n.${firstColumn} = o.${firstColumn}
                 AND n.epoch > o.epoch AND n.epoch <= $1::TIMESTAMPTZ)`
          : `DELETE FROM hx.${table} WHERE epoch < $1::TIMESTAMPTZ`;
        rows += Number((await con.runAndReadAll(sql, [at])).getRowsJS()[0]?.[0] ?? 0);
      }
      const epochs = Number(
        (
          await con.runAndReadAll("DELETE FROM hx.epochs WHERE epoch < $1::TIMESTAMPTZ", [at])
        ).getRowsJS()[0]?.[0] ?? 0,
      );
      await con.run("COMMIT");
      return { epochs, rows };
    } catch (err) {
      await con.run("ROLLBACK").catch(() => undefined);
      throw err;
    }
  });
}
