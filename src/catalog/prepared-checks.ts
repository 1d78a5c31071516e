/**
 * The checks' statements, prepared once per connection and run again each epoch with the
 * epoch bound. Preparing saves the parse: 800 ms against 530 ms per epoch for the 95
 * operational checks of a single server, 640 against 540 ms on a medium system with a week of
 * history. It does not save the plan: DuckDB 1.5 binds and plans a statement that has
 * parameters and reads a table again at each execution (PreparedStatement::CanCachePlan), so
 * that the bound epoch can prune the scans. That is about 3 ms of a check's 5. A statement
 * without parameters keeps its plan (2 ms), but the epoch would then come from a table, and
 * some checks lose their pruning that way (accounts-001: 113 ms against 5).
 *
 * DuckDB does not always prepare a statement again when a macro it calls is created anew: one
 * whose macro reads no table goes on running the old macro (tested). Installing the macros
 * therefore forgets the connection's statements (forgetPrepared); views change only in
 * migrations, which run at open, before any statement is prepared.
 */
import type { DuckDBConnection, DuckDBPreparedStatement } from "@duckdb/node-api";

const byConnection = new WeakMap<DuckDBConnection, Map<string, DuckDBPreparedStatement>>();

/** Drops the statements prepared on `con`: the macros they were planned with are about to change. */
export function forgetPrepared(con: DuckDBConnection): void {
  const cache = byConnection.get(con);
  if (!cache) return;
  for (const prepared of cache.values()) prepared.destroySync();
  byConnection.delete(con);
}

/**
 * Prepared statements of one connection by their SQL, for one run: `get` prepares what the
 * connection has not prepared yet; `keepOnly` forgets those this run did not ask for (a check
 * disabled or given other thresholds has new SQL), so the cache holds one run's statements.
 */
export class PreparedChecks {
  private readonly con: DuckDBConnection;
  private readonly cache: Map<string, DuckDBPreparedStatement>;
  private readonly used = new Set<string>();

  constructor(con: DuckDBConnection) {
    this.con = con;
    let cache = byConnection.get(con);
    if (!cache) {
      cache = new Map();
      byConnection.set(con, cache);
    }
    this.cache = cache;
  }

  async get(sql: string): Promise<DuckDBPreparedStatement> {
    this.used.add(sql);
    let prepared = this.cache.get(sql);
    if (!prepared) {
      prepared = await this.con.prepare(sql);
      this.cache.set(sql, prepared);
    }
    return prepared;
  }

  keepOnly(): void {
    for (const [sql, prepared] of this.cache) {
      if (this.used.has(sql)) continue;
      prepared.destroySync();
      this.cache.delete(sql);
    }
  }
}
