/** Renders rows of objects as an aligned text table for a terminal. */
export function renderTable(rows: readonly Record<string, unknown>[], columns?: readonly string[]): string {
  const cols = columns ?? (rows[0] ? Object.keys(rows[0]) : []);
  if (cols.length === 0) return "(no rows)\n";
  const cell = (v: unknown): string =>
    v === null || v === undefined ? "" : typeof v === "string" ? v : JSON.stringify(v);
  const body = rows.map((row) => cols.map((c) => cell(row[c])));
  const widths = cols.map((c, i) => Math.max(c.length, ...body.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  const out = [line(cols), line(widths.map((w) => "-".repeat(w))), ...body.map(line)];
  out.push(`(${rows.length} row${rows.length === 1 ? "" : "s"})`);
  return out.join("\n") + "\n";
}
