import type { DuckDBConnection } from "@duckdb/node-api";
import { migration as m0001 } from "./0001-init.ts";
import { migration as m0002 } from "./0002-views.ts";

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/** Every migration, in order. A released migration is never edited: add a new one. */
export const MIGRATIONS: readonly Migration[] = [m0001, m0002];

/** Applies pending migrations, each in its own transaction, recording it in hx.migrations. */
export async function migrate(con: DuckDBConnection, migrations = MIGRATIONS): Promise<number[]> {
  await con.run(`CREATE SCHEMA IF NOT EXISTS hx;
    CREATE TABLE IF NOT EXISTS hx.migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMPTZ NOT NULL);
    COMMENT ON TABLE hx.migrations IS 'Schema migrations applied to this catalog, one row each.';
    COMMENT ON COLUMN hx.migrations.version IS 'Migration number.';
    COMMENT ON COLUMN hx.migrations.name IS 'What the migration does.';
    COMMENT ON COLUMN hx.migrations.applied_at IS 'When it was applied.';`);
  const done = new Set(
    (await con.runAndReadAll("SELECT version FROM hx.migrations")).getRowsJS().map((r) => Number(r[0])),
  );
  const applied: number[] = [];
  for (const m of migrations) {
    if (done.has(m.version)) continue;
    await con.run("BEGIN TRANSACTION");
    try {
      await con.run(m.sql);
      await con.run("INSERT INTO hx.migrations VALUES ($1, $2, now())", [m.version, m.name]);
      await con.run("COMMIT");
    } catch (err) {
      await con.run("ROLLBACK");
      throw new Error(`migration ${m.version} (${m.name}) failed: ${(err as Error).message}`, { cause: err });
    }
    applied.push(m.version);
  }
  return applied;
}
