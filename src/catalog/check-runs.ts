/**
 * Running the operational checks over one epoch, in the catalog: each check's rows go to
 * a connection-local staging table in a statement of its own (a failing check loses only
 * its own rows), then the epoch's findings and its hx.check_runs row are written in one
 * transaction. An epoch whose checks already ran (a redelivered marker) is read back, not
 * run again, so findings are never stored twice.
 */
import type { DuckDBConnection } from "@duckdb/node-api";
import { findingId, isSeverity, type Finding } from "../domain/index.ts";
import { EPOCH_TEXT_FORMAT } from "./epoch-bound.ts";
import type { Catalog } from "./open-catalog.ts";
import { forgetPrepared, PreparedChecks } from "./prepared-checks.ts";

/** One check to run: a SELECT over [$1, $2] with the columns of hx.check_findings but `disabled`. */
export interface CheckStatement {
  readonly code: string;
  readonly sql: string;
  readonly disabled: boolean;
}

export interface StoredFinding extends Finding {
  readonly disabled: boolean;
}

export interface EpochCheckResult {
  /** False when the checks had already run for this epoch and their findings were read back. */
  readonly ran: boolean;
  readonly ms: number;
  readonly timings: readonly { readonly code: string; readonly ms: number; readonly rows: number }[];
  readonly failed: readonly { readonly code: string; readonly error: string }[];
  readonly findings: readonly StoredFinding[];
  /**
   * Servers that answered everything they serve in this epoch (those that answered only
   * part of it, hx.epochs.servers_partial, are left out: what is missing from their replies
   * was not observed), and those expected to answer.
   */
  readonly answered: readonly string[];
  readonly expected: readonly string[];
  /**
   * Streams and consumers some server holds a replica of in this epoch while no leader
   * reported their state (an election under way, or the leader missed the scrape):
   * `stream|<pk>`, `consumer|<pk>`, and their replicas, `stream_replica|<pk>`,
   * `consumer_replica|<pk>`. What a check reads from the leader was not observed for them.
   */
  readonly leaderless: readonly string[];
}

const STAGING = "temp.main.pending_findings";

/** Creates (or replaces) the helper and check macros in the checks schema. */
export async function installCheckMacros(catalog: Catalog, statements: readonly string[]): Promise<void> {
  await catalog.withWriter(async ({ con }) => {
    forgetPrepared(con);
    await con.run("BEGIN TRANSACTION");
    try {
      for (const sql of statements) await con.run(sql);
      await con.run("COMMIT");
    } catch (err) {
      await con.run("ROLLBACK");
      throw err;
    }
  });
}

/**
 * Runs every statement over `epoch` (RFC 3339) and stores the findings, unless that was done
 * before. Undefined when the catalog does not hold the epoch: running checks over an epoch
 * without data would find nothing and so resolve every finding.
 */
export async function runEpochChecks(
  catalog: Catalog,
  epoch: string,
  statements: readonly CheckStatement[],
): Promise<EpochCheckResult | undefined> {
  return catalog.withWriter(async ({ con }) => {
    const started = performance.now();
    const servers = await epochServers(con, epoch);
    if (!servers) return undefined;
    const done = await con.runAndReadAll("SELECT 1 FROM hx.check_runs WHERE epoch = $1::TIMESTAMPTZ", [
      epoch,
    ]);
    if (done.currentRowCount > 0) {
      return {
        ran: false,
        ms: 0,
        timings: [],
        failed: [],
        findings: await readFindings(con, epoch),
        ...servers,
      };
    }
    // Kept for the connection's life (emptied after each run): dropping and making it again
    // each run would change the catalog and so make DuckDB prepare every check again.
    await con.run(
      `CREATE TEMP TABLE IF NOT EXISTS pending_findings AS SELECT * EXCLUDE (disabled) FROM hx.check_findings LIMIT 0`,
    );
    await con.run(`DELETE FROM ${STAGING}`);
    const prepared = new PreparedChecks(con);
    const timings: { code: string; ms: number; rows: number }[] = [];
    const failed: { code: string; error: string }[] = [];
    for (const statement of statements) {
      const t0 = performance.now();
      try {
        const insert = await prepared.get(`INSERT INTO ${STAGING} ${statement.sql}`);
        insert.bind([epoch, epoch]);
        const result = await insert.run();
        timings.push({ code: statement.code, ms: performance.now() - t0, rows: Number(result.rowsChanged) });
      } catch (err) {
        failed.push({ code: statement.code, error: err instanceof Error ? err.message : String(err) });
      }
    }
    prepared.keepOnly();
    const disabled = statements.filter((s) => s.disabled).map((s) => s.code);
    const ms = performance.now() - started;
    await con.run("BEGIN TRANSACTION");
    try {
      await con.run("DELETE FROM hx.check_findings WHERE epoch = $1::TIMESTAMPTZ", [epoch]);
      await con.run(
        `INSERT INTO hx.check_findings
         SELECT epoch, code, entity_type, entity_ref, entity_key, entity_name, server, severity,
                list_contains(from_json($1::JSON, '["VARCHAR"]'), code), detail
         FROM ${STAGING}`,
        [JSON.stringify(disabled)],
      );
      await con.run(
        `INSERT INTO hx.check_runs VALUES ($1::TIMESTAMPTZ, now(), $2, $3, (SELECT count(*) FROM ${STAGING}), from_json($4::JSON, '["VARCHAR"]'))`,
        [epoch, ms, statements.length, JSON.stringify(failed.map((f) => `${f.code}: ${f.error}`))],
      );
      await con.run("COMMIT");
    } catch (err) {
      await con.run("ROLLBACK");
      throw err;
    } finally {
      await con.run(`DELETE FROM ${STAGING}`);
    }
    return { ran: true, ms, timings, failed, findings: await readFindings(con, epoch), ...servers };
  });
}

/** The latest epoch the checks ran over, with its findings; undefined for a catalog where they never ran. */
export async function latestEpochFindings(
  catalog: Catalog,
): Promise<{ epoch: Date; findings: readonly StoredFinding[] } | undefined> {
  return catalog.withReader(async (con) => {
    const latest = await con.runAndReadAll(
      `SELECT strftime(max(epoch), '${EPOCH_TEXT_FORMAT}') FROM hx.check_runs`,
    );
    const text = latest.getRowsJS()[0]?.[0];
    if (typeof text !== "string") return undefined;
    return { epoch: new Date(text), findings: await readFindings(con, text) };
  });
}

/**
 * When each of `ids` (finding identities of the latest run) has been firing without a gap:
 * the first epoch of its current unbroken run of epochs the checks ran over.
 */
export async function firingSince(catalog: Catalog, epoch: string): Promise<Map<string, Date>> {
  return catalog.withReader(async (con) => {
    const reader = await con.runAndReadAll(
      `WITH runs AS (SELECT epoch, row_number() OVER (ORDER BY epoch) AS n FROM hx.check_runs WHERE epoch <= $1::TIMESTAMPTZ),
            f AS (SELECT f.code, f.entity_type, f.entity_ref, coalesce(f.entity_key, '') AS k, f.epoch, r.n
                  FROM hx.check_findings f JOIN runs r USING (epoch)),
            g AS (SELECT *, n - row_number() OVER (PARTITION BY code, entity_type, entity_ref, k ORDER BY n) AS grp FROM f),
            last_grp AS (SELECT code, entity_type, entity_ref, k, arg_max(grp, n) AS grp FROM g GROUP BY ALL)
       SELECT g.code, g.entity_type, g.entity_ref, g.k, strftime(min(g.epoch), '${EPOCH_TEXT_FORMAT}')
       FROM g JOIN last_grp USING (code, entity_type, entity_ref, k, grp)
       GROUP BY ALL`,
      [epoch],
    );
    const since = new Map<string, Date>();
    for (const [code, type, ref, key, first] of reader.getRowsJS()) {
      const id = findingId({
        code: text(code),
        entityType: text(type),
        entityPk: Number(ref),
        ...(key === "" ? {} : { entityKey: text(key) }),
      });
      since.set(id, new Date(text(first)));
    }
    return since;
  });
}

async function epochServers(con: DuckDBConnection, epoch: string) {
  const reader = await con.runAndReadAll(
    `SELECT list_filter(servers_answered, s -> NOT list_contains(coalesce(servers_partial, []), s)), servers_expected
     FROM hx.epochs WHERE epoch = $1::TIMESTAMPTZ`,
    [epoch],
  );
  const row = reader.getRowsJS()[0];
  if (!row) return undefined;
  return {
    answered: (row?.[0] as string[] | undefined) ?? [],
    expected: (row?.[1] as string[] | undefined) ?? [],
    leaderless: await leaderless(con, epoch),
  };
}

/** See EpochCheckResult.leaderless. */
async function leaderless(con: DuckDBConnection, epoch: string): Promise<string[]> {
  const reader = await con.runAndReadAll(
    `WITH streams AS (
       SELECT i.stream_pk AS pk FROM hx.stream_replica_stats r JOIN hx.stream_replica_ident i USING (stream_replica_pk)
       WHERE r.epoch = $1::TIMESTAMPTZ
       EXCEPT SELECT stream_pk FROM hx.stream_stats WHERE epoch = $1::TIMESTAMPTZ
     ), consumers AS (
       SELECT i.consumer_pk AS pk FROM hx.consumer_replica_stats r JOIN hx.consumer_replica_ident i USING (consumer_replica_pk)
       WHERE r.epoch = $1::TIMESTAMPTZ
       EXCEPT SELECT consumer_pk FROM hx.consumer_stats WHERE epoch = $1::TIMESTAMPTZ
     )
     SELECT 'stream|' || pk FROM streams
     UNION ALL SELECT 'consumer|' || pk FROM consumers
     -- Their replicas too: what a check reads of a replica from its leader (its lag, whether
     -- it is current) was not observed either, though the replica's own server answered.
     UNION ALL SELECT 'stream_replica|' || i.stream_replica_pk
       FROM hx.stream_replica_ident i JOIN streams s ON s.pk = i.stream_pk
     UNION ALL SELECT 'consumer_replica|' || i.consumer_replica_pk
       FROM hx.consumer_replica_ident i JOIN consumers c ON c.pk = i.consumer_pk
     ORDER BY 1`,
    [epoch],
  );
  return reader.getRowsJS().map((r) => r[0] as string);
}

async function readFindings(con: DuckDBConnection, epoch: string): Promise<StoredFinding[]> {
  const reader = await con.runAndReadAll(
    `SELECT code, entity_type, entity_ref, entity_key, entity_name, server, severity, disabled
     FROM hx.check_findings WHERE epoch = $1::TIMESTAMPTZ ORDER BY code, entity_type, entity_ref, entity_key`,
    [epoch],
  );
  return reader.getRowsJS().map(([code, type, ref, key, name, server, severity, disabled]) => {
    if (!isSeverity(severity)) throw new Error(`check ${text(code)} returned severity ${text(severity)}`);
    return {
      code: text(code),
      entityType: text(type),
      entityPk: Number(ref),
      ...(key === null || key === undefined ? {} : { entityKey: text(key) }),
      entityName: text(name),
      ...(server === null || server === undefined ? {} : { server: text(server) }),
      severity,
      disabled: disabled === true,
    };
  });
}

/** A scalar DuckDB value as text (these columns hold VARCHARs and integers only). */
function text(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "bigint" || typeof value === "boolean") return `${value}`;
  throw new Error(`expected a scalar, got ${JSON.stringify(value)}`);
}
