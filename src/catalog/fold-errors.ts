/**
 * Why a fold failed, as far as a retry is concerned. Most failures pass (the catalog busy,
 * I/O, memory, a key cache that drifted from the file and is reloaded): the marker is tried
 * again. A failure that comes from the epoch's own data fails the same way every time, and
 * a marker that kept it would hold up every later epoch; the catalog side sets such a
 * marker aside after a few attempts.
 */

/** The fold failed because of what the epoch holds: the same marker fails the same way again. */
export class FoldDataError extends Error {
  override readonly name = "FoldDataError";
}

/**
 * DuckDB's error classes that the data causes: a constraint (NOT NULL, a duplicate key),
 * a value that does not convert or fit. DuckDB prefixes a statement's error with its class
 * ("Constraint Error: …"); the Appender reports "Failed to append: <what>" without one.
 * Everything else (IO Error, Out of Memory Error, TransactionContext Error, Interrupt
 * Error, a FATAL Error, errors of the bus) is taken as passing.
 */
const DATA_ERRORS = [
  /^(Constraint|Conversion|Invalid Input|Out of Range|Mismatch Type) Error:/,
  /^Failed to append: .*(constraint|Duplicate key|[Cc]ould not convert|out of range)/,
];

/**
 * `err` as the fold reports it: a FoldDataError (with `err` as its cause) when the data
 * caused it, `err` itself otherwise. A TypeError or RangeError from the fold's own code is
 * data too: the input took a shape the code does not expect, and it will again.
 */
export function classifyFoldError(err: unknown): unknown {
  if (err instanceof FoldDataError || !(err instanceof Error)) return err;
  const data =
    err instanceof TypeError || err instanceof RangeError || DATA_ERRORS.some((re) => re.test(err.message));
  return data ? new FoldDataError(err.message, { cause: err }) : err;
}
