/**
 * Retention: what the catalog forgets once it is older than `db.retention`.
 *
 * Per epoch: every hx table with an `epoch` column loses its rows before the cutoff, except
 * that each entity keeps the _opts row in force at the cutoff (and every later one).
 *
 * Per entity: an identity that ended before the cutoff goes too — its _ident row and all of
 * its _opts rows — so that short-lived entities (client connections above all, service
 * instances, links keyed by ids) do not pile up in the file and in the writer's key cache.
 * An identity goes when
 *   - it has no _stats row at or after the cutoff, and
 *   - its first_epoch is before the cutoff (an entity seen only in kept epochs stays), and
 *   - no row left in any other hx table refers to its pk (see `pkReferences`), and
 *   - it does not hold its kind's highest pk: pks are never handed out twice, even after a
 *     restart rebuilds the key cache from the tables (next pk = highest + 1), so an
 *     entity seen again after its identity went gets a new pk.
 *
 * References are found by name, not listed: a column named like a kind's pk column, or
 * ending in `_` + that name (`leader_server_pk`), in any hx base table other than the
 * kind's own column in its own three tables. Kinds are removed in an order where a kind
 * comes before every kind it refers to (connections before servers, endpoints before
 * services), so one pass sees the references the earlier kinds just dropped.
 * test/integration/catalog/retention-identities.test.ts checks that every `*_pk` column of
 * the schema resolves to a kind, so a reference named otherwise fails a test instead of
 * letting an identity go while still referred to.
 *
 * main.ips loses the addresses last seen before the cutoff.
 */
import type { DuckDBConnection } from "@duckdb/node-api";
import type { KeyCache } from "./key-cache.ts";
import { ENTITY_KINDS, KIND_NAMES } from "./kinds/entity-kinds.ts";
import type { Catalog } from "./open-catalog.ts";

export interface RetentionResult {
  /** Epochs removed from hx.epochs. */
  epochs: number;
  /** Rows removed from stats and _opts tables (superseded ones and those of removed identities). */
  rows: number;
  /** _ident rows removed: entities that ended before the cutoff and that nothing refers to. */
  identities: number;
  /** Client addresses removed from main.ips. */
  ips: number;
}

/** An entity kind as the schema shows it: hx.<name>_ident, _opts and _stats, pk first in _ident. */
export interface KindTables {
  readonly name: string;
  readonly pk: string;
}

/** A column of an hx table that holds a pk of `kind`. */
export interface PkReference {
  readonly kind: string;
  readonly table: string;
  readonly column: string;
}

/** Every kind the schema has: an _ident table (pk first, with first_epoch) with _opts and _stats beside it. */
export async function entityKinds(con: DuckDBConnection): Promise<KindTables[]> {
  const found = await con.runAndReadAll(
    `SELECT substr(t.table_name, 1, length(t.table_name) - 6) AS name,
            (SELECT c.column_name FROM duckdb_columns() c
              WHERE c.schema_name = 'hx' AND c.table_name = t.table_name AND c.column_index = 1) AS pk
       FROM duckdb_tables() t
      WHERE t.schema_name = 'hx' AND t.table_name LIKE '%\\_ident' ESCAPE '\\'
        AND EXISTS (SELECT 1 FROM duckdb_columns() c WHERE c.schema_name = 'hx'
                     AND c.table_name = t.table_name AND c.column_name = 'first_epoch')
        AND EXISTS (SELECT 1 FROM duckdb_tables() o WHERE o.schema_name = 'hx'
                     AND o.table_name = substr(t.table_name, 1, length(t.table_name) - 6) || '_opts')
        AND EXISTS (SELECT 1 FROM duckdb_tables() s WHERE s.schema_name = 'hx'
                     AND s.table_name = substr(t.table_name, 1, length(t.table_name) - 6) || '_stats')
      ORDER BY name`,
  );
  return (found.getRowsJS() as [string, string][]).map(([name, pk]) => ({ name, pk }));
}

/** The columns that refer to each kind's pk (views left out: they hold no rows of their own). */
export async function pkReferences(
  con: DuckDBConnection,
  kinds: readonly KindTables[],
): Promise<PkReference[]> {
  const columns = (
    await con.runAndReadAll(
      `SELECT c.table_name, c.column_name FROM duckdb_columns() c
         JOIN duckdb_tables() t ON t.schema_name = c.schema_name AND t.table_name = c.table_name
        WHERE c.schema_name = 'hx' ORDER BY c.table_name, c.column_index`,
    )
  ).getRowsJS() as [string, string][];
  const references: PkReference[] = [];
  for (const kind of kinds) {
    const own = new Set(["_ident", "_opts", "_stats"].map((suffix) => kind.name + suffix));
    for (const [table, column] of columns) {
      if (column !== kind.pk && !column.endsWith(`_${kind.pk}`)) continue;
      if (own.has(table) && column === kind.pk) continue;
      references.push({ kind: kind.name, table, column });
    }
  }
  return references;
}

/**
 * Kinds in removal order: a kind before the kinds it refers to. A cycle (none today) keeps
 * its kinds in name order at the end and makes `applyRetention` repeat the pass.
 */
export function removalOrder(
  kinds: readonly KindTables[],
  references: readonly PkReference[],
): { order: KindTables[]; cyclic: boolean } {
  const kindOfTable = new Map<string, string>();
  for (const kind of kinds) {
    for (const suffix of ["_ident", "_opts", "_stats"]) kindOfTable.set(kind.name + suffix, kind.name);
  }
  // referrers.get(k): kinds whose tables refer to k, which must be removed first.
  const referrers = new Map(kinds.map((k) => [k.name, new Set<string>()]));
  for (const ref of references) {
    const from = kindOfTable.get(ref.table);
    if (from !== undefined && from !== ref.kind) referrers.get(ref.kind)?.add(from);
  }
  const order: KindTables[] = [];
  const done = new Set<string>();
  let progress = true;
  while (progress) {
    progress = false;
    for (const kind of kinds) {
      if (done.has(kind.name) || ![...referrers.get(kind.name)!].every((r) => done.has(r))) continue;
      order.push(kind);
      done.add(kind.name);
      progress = true;
    }
  }
  const rest = kinds.filter((k) => !done.has(k.name));
  return { order: [...order, ...rest], cyclic: rest.length > 0 };
}

const count = (rows: unknown[][]): number => Number(rows[0]?.[0] ?? 0);

/**
 * Deletes every epoch older than `cutoff` and the identities that ended before it (see the
 * file comment), in one transaction on the writer, between folds (readers keep their
 * snapshot, so queries are not blocked). After COMMIT the removed identities leave the
 * writer's key cache too, so its memory stays bounded by the retention window.
 */
export async function applyRetention(catalog: Catalog, cutoff: Date): Promise<RetentionResult> {
  return catalog.withWriter(async (writer) => {
    const { con } = writer;
    await con.run("BEGIN TRANSACTION");
    try {
      const { result, removed } = await removeOlderThan(con, cutoff.toISOString());
      await con.run("COMMIT");
      // Only now: a rolled-back removal leaves the cache as it was. Forgetting the removed
      // keys costs what was removed; reloading the whole cache (fold-epoch.ts does so after
      // a failure) would cost every identity of the retention window, once a minute.
      forget(writer.keys, removed);
      return result;
    } catch (err) {
      await con.run("ROLLBACK").catch(() => undefined);
      throw err;
    }
  });
}

/**
 * Retention's deletions on `con`, inside the caller's transaction: every row of an epoch
 * before `at` (a TIMESTAMPTZ literal; 'infinity' removes every epoch), the _opts rows no
 * longer in force, the identities that ended before it and main.ips's addresses last seen
 * before it. Also brings a backup file in line with retention that ran on the node while
 * the file's tables were copied (backup-reconcile.ts). Answers the identities removed, per
 * kind, for the writer's key cache.
 */
export async function removeOlderThan(
  con: DuckDBConnection,
  at: string,
): Promise<{ result: RetentionResult; removed: Map<string, Record<string, unknown>[]> }> {
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
  const kinds = await entityKinds(con);
  const references = await pkReferences(con, kinds);
  const { order, cyclic } = removalOrder(kinds, references);
  const removed = new Map<string, Record<string, unknown>[]>();
  let rows = 0;
  for (const [table, firstColumn] of tables) {
    const sql = table.endsWith("_opts")
      ? // Keep the newest row at or before the cutoff: it is still in force after it.
        `DELETE FROM hx.${table} o WHERE o.epoch < $1::TIMESTAMPTZ AND EXISTS (
           SELECT 1 FROM hx.${table} n WHERE n.${firstColumn} = o.${firstColumn}
             AND n.epoch > o.epoch AND n.epoch <= $1::TIMESTAMPTZ)`
      : `DELETE FROM hx.${table} WHERE epoch < $1::TIMESTAMPTZ`;
    rows += count((await con.runAndReadAll(sql, [at])).getRowsJS());
  }
  let identities = 0;
  for (let pass = 0; ; pass++) {
    let passRemoved = 0;
    for (const kind of order) {
      const gone = await removeIdentities(con, kind, references, at);
      if (gone.length === 0) continue;
      passRemoved += gone.length;
      removed.set(kind.name, [...(removed.get(kind.name) ?? []), ...gone]);
      rows += count(
        (
          await con.runAndReadAll(
            `DELETE FROM hx.${kind.name}_opts o WHERE NOT EXISTS (
               SELECT 1 FROM hx.${kind.name}_ident i WHERE i.${kind.pk} = o.${kind.pk})`,
          )
        ).getRowsJS(),
      );
    }
    identities += passRemoved;
    if (!cyclic || passRemoved === 0 || pass > kinds.length) break;
  }
  const ips = count(
    (await con.runAndReadAll("DELETE FROM main.ips WHERE last_epoch < $1::TIMESTAMPTZ", [at])).getRowsJS(),
  );
  const epochs = count(
    (await con.runAndReadAll("DELETE FROM hx.epochs WHERE epoch < $1::TIMESTAMPTZ", [at])).getRowsJS(),
  );
  return { result: { epochs, rows, identities, ips }, removed };
}

/** Deletes the kind's identities that ended before the cutoff and nothing refers to; returns their rows. */
async function removeIdentities(
  con: DuckDBConnection,
  kind: KindTables,
  references: readonly PkReference[],
  at: string,
): Promise<Record<string, unknown>[]> {
  const pk = kind.pk;
  const ended = `i.first_epoch < $1::TIMESTAMPTZ
           AND i.${pk} < (SELECT max(${pk}) FROM hx.${kind.name}_ident)
           AND NOT EXISTS (SELECT 1 FROM hx.${kind.name}_stats s
                            WHERE s.${pk} = i.${pk} AND s.epoch >= $1::TIMESTAMPTZ)`;
  // Most kinds have no ended identity most of the time: the references, whole tables some
  // of them, are read only when one has.
  const candidates = await con.runAndReadAll(`SELECT 1 FROM hx.${kind.name}_ident i WHERE ${ended} LIMIT 1`, [
    at,
  ]);
  if (candidates.currentRowCount === 0) return [];
  const unreferenced = references
    .filter((r) => r.kind === kind.name)
    .map((r) => `AND NOT EXISTS (SELECT 1 FROM hx.${r.table} r WHERE r.${r.column} = i.${pk})`)
    .join("\n           ");
  const sql = `DELETE FROM hx.${kind.name}_ident i
         WHERE ${ended}
           ${unreferenced}
        RETURNING *`;
  return (await con.runAndReadAll(sql, [at])).getRowObjectsJS();
}

/**
 * Drops removed identities from the committed key cache: their natural keys (read back from
 * the deleted rows, as `loadKeyCache` reads them), their _opts fingerprints and epochs. `next`
 * stays, so pks are not reused within this process either.
 */
function forget(keys: KeyCache, removed: ReadonlyMap<string, readonly Record<string, unknown>[]>): void {
  for (const kind of KIND_NAMES) {
    const { pk: pkColumn, keyOf } = ENTITY_KINDS[kind];
    const cache = keys[kind];
    for (const row of removed.get(kind) ?? []) {
      const pk = Number(row[pkColumn]);
      const key = keyOf(row);
      if (cache.pks.get(key) === pk) cache.pks.delete(key);
      cache.opts.delete(pk);
      cache.optsEpoch.delete(pk);
      cache.raw.delete(pk);
      cache.carried.delete(pk);
    }
  }
}
