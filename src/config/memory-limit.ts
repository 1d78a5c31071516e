/**
 * `db.memory-limit` as DuckDB 1.5 reads its `memory_limit` setting, so that a value it would
 * refuse is refused with its path at start-up instead of leaving a catalog that never opens
 * ("Failed to set config", retried every minute). The rule was taken from trying values on
 * the installed @duckdb/node-api (1.5.6): a number (`4`, `1.5`, `.5`, `1e3`), optional
 * spaces, then a unit, any case. A negative number (`-1`), or `none`, means no limit. DuckDB
 * takes no percentage and no bare number. It also ignores whatever follows a space after the
 * unit ("4 GB x") and reads anything that starts with "-" as no limit ("-lots"): natsmon
 * refuses those, as they can only be slips. The schema trims the value first.
 */

/** Bytes per unit, by the lower-cased spellings DuckDB takes. */
export const UNITS: ReadonlyMap<string, number> = new Map([
  ...["b", "byte", "bytes"].map((u) => [u, 1] as const),
  ...["k", "kb", "kilobyte", "kilobytes"].map((u) => [u, 1e3] as const),
  ...["m", "mb", "megabyte", "megabytes"].map((u) => [u, 1e6] as const),
  ...["g", "gb", "gigabyte", "gigabytes"].map((u) => [u, 1e9] as const),
  ...["t", "tb", "terabyte", "terabytes"].map((u) => [u, 1e12] as const),
  ["kib", 1024],
  ["mib", 1024 ** 2],
  ["gib", 1024 ** 3],
  ["tib", 1024 ** 4],
]);

export const SIZE = /^(-)?((?:\d+(?:\.\d*)?|\.\d+)(?:[eE]-?\d+)?)\s*([A-Za-z%]*)$/;

/**
 * The least natsmon accepts. Measured with DuckDB 1.5.6 on natsmon's migrations: at 16 MB
 * the catalog runs out of memory creating its tables, at 20 MB it opens and folds epochs.
 */
export const MIN_MEMORY_LIMIT_BYTES = 32e6;
/** DuckDB counts the limit in 64 bits; near 2^64 bytes it refuses the value or wraps it to 0. */
const MAX_MEMORY_LIMIT_BYTES = 2 ** 63;

export const UNIT_LIST = "B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024)";

/** Why DuckDB could not use `text` as natsmon's memory limit, or undefined when it can. */
export function memoryLimitProblem(text: string): string | undefined {
  if (text === "none") return undefined;
  const match = SIZE.exec(text);
  if (!match) {
    return (
      `"${text}" is not a size: write a number and a unit, such as "4GB", "512MiB" or "1.5GB", ` +
      `or "none" for no limit`
    );
  }
  const [, negative, number, unit] = match as unknown as [string, string | undefined, string, string];
  const perUnit = UNITS.get(unit.toLowerCase());
  // DuckDB reads any negative value as no limit at all ("-1" is the usual way to say it).
  if (negative && (unit === "" || perUnit !== undefined)) return undefined;
  if (unit === "%") {
    return `"${text}": DuckDB takes no percentage for its memory limit; give a size such as "4GB" or "512MiB"`;
  }
  if (unit === "") return `"${text}" has no unit: write one, such as "${number}MB" (units ${UNIT_LIST})`;
  if (perUnit === undefined) return `"${text}": "${unit}" is not a unit DuckDB takes; use ${UNIT_LIST}`;
  const bytes = Number(number) * perUnit;
  if (bytes < MIN_MEMORY_LIMIT_BYTES) {
    return (
      `must be at least 32MB: with "${text}" natsmon's catalog would not open ` +
      "(DuckDB runs out of memory creating its tables)"
    );
  }
  if (bytes >= MAX_MEMORY_LIMIT_BYTES) {
    return `must be less than 8 EiB, which DuckDB cannot count ("${text}"); write "none" for no limit`;
  }
  return undefined;
}
