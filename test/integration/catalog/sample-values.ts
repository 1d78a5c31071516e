/** Values of every catalog column type, for tests that write rows of any table. */

/**
 * A value of a column type for the `n`th row written: distinct for each row, so that a key
 * of any columns stays unique. List elements are JSON objects, as the catalog's lists hold.
 */
export function sampleValue(type: string, n: number): string {
  if (type === "VARCHAR[]") return `['{"n": ${n}}']`;
  if (type.endsWith("[]")) return `[${sampleValue(type.slice(0, -2), n)}]`;
  if (/^(STRUCT|MAP|UNION)\b/.test(type)) return "NULL";
  if (type === "BOOLEAN") return n % 2 === 0 ? "true" : "false";
  if (/^U?(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT)$/.test(type)) return String(n);
  if (/^(FLOAT|DOUBLE|DECIMAL)/.test(type)) return `${n}.5`;
  if (type === "VARCHAR") return `'v${n}'`;
  if (type === "JSON") return `'{"n": ${n}}'`;
  if (type === "BLOB") return `encode('v${n}')`;
  if (type === "TIMESTAMP WITH TIME ZONE")
    return `TIMESTAMPTZ '2026-11-01 00:00:00+00' + INTERVAL ${n} MINUTE`;
  if (type === "TIMESTAMP") return `TIMESTAMP '2026-11-01 00:00:00' + INTERVAL ${n} MINUTE`;
  if (type === "DATE") return `DATE '2026-11-01' + ${n}`;
  if (type === "INTERVAL") return `INTERVAL ${n} SECOND`;
  throw new Error(`a catalog column has type ${type}: give it a sample value here`);
}
