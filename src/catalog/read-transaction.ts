/**
 * DuckDB ends a streamed result that fails mid-scan exactly like a complete one: fetchChunk
 * returns an empty chunk, and the bindings expose no result error. Inside an explicit
 * transaction the failure leaves the transaction aborted, which a probe after the last
 * chunk detects. So every streamed read runs in a read transaction: begun before the
 * query, checked once the result is exhausted, rolled back before the connection goes back.
 */
import type { DuckDBConnection } from "@duckdb/node-api";
import { BadRequestError } from "../domain/index.ts";

export async function beginReadTransaction(con: DuckDBConnection): Promise<void> {
  await con.run("BEGIN TRANSACTION");
}

/** Throws BadRequestError when the transaction's query failed after it had begun streaming. */
export async function checkReadTransaction(con: DuckDBConnection): Promise<void> {
  try {
    await con.run("SELECT 1");
  } catch (cause) {
    throw new BadRequestError(
      "the query failed while its result was being read (DuckDB reports no cause for a failure mid-stream)",
      { cause },
    );
  }
}

/** A read transaction only read: rolling it back ends it, and resets one a failure aborted. */
export async function endReadTransaction(con: DuckDBConnection): Promise<void> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await con.run("ROLLBACK");
      return;
    } catch {
      // No transaction was open (BEGIN failed), or a late interrupt hit: once more for the latter.
    }
  }
}
