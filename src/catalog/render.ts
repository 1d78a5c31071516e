/**
 * Renders query values for the buffered db.query reply: integers as JSON numbers when
 * exact, else decimal strings; timestamps RFC 3339 (DATE as YYYY-MM-DD); BLOB base64;
 * lists, structs and maps as JSON; NULL as null (an empty field in CSV).
 */
export function toJsonValue(value: unknown, isDate = false): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === "bigint") {
    return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(value)
      : value.toString();
  }
  if (typeof value === "number") return Number.isFinite(value) ? value : String(value);
  if (value instanceof Date) return isDate ? value.toISOString().slice(0, 10) : value.toISOString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  if (Array.isArray(value)) return value.map((v) => toJsonValue(v));
  if (typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toJsonValue(v)]));
  }
  return value;
}

/** Column names made unique (`a`, `a_1`, …) so JSON objects keep every column. */
export function uniqueNames(names: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return names.map((name) => {
    const count = seen.get(name) ?? 0;
    seen.set(name, count + 1);
    return count === 0 ? name : `${name}_${count}`;
  });
}

/** One CSV field (RFC 4180): quoted when it holds a comma, quote, CR or LF. */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return "";
  const text =
    typeof value === "string" ? value : typeof value === "object" ? JSON.stringify(value) : scalarText(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function toCsv(columns: readonly string[], rows: readonly unknown[][]): string {
  const lines = [columns.map(csvField).join(",")];
  for (const row of rows) lines.push(row.map(csvField).join(","));
  return lines.join("\r\n") + "\r\n";
}

function scalarText(value: unknown): string {
  return typeof value === "number" || typeof value === "bigint" || typeof value === "boolean"
    ? `${value}`
    : "";
}
