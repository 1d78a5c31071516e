/** The terminal's width when stdout is one; undefined when piped (nothing is wrapped then). */
function terminalWidth(): number | undefined {
  return process.stdout.isTTY ? process.stdout.columns : undefined;
}

/** Below this many characters a wrapped last column would be unreadable: the line is left long. */
const MIN_WRAP = 24;

/**
 * Renders rows of objects as an aligned text table for a terminal. On a terminal narrower than
 * the table, the last column (a comment or description, as natsmon's tables end) is wrapped
 * at spaces under itself, so each row stays readable; piped output is never wrapped.
 */
export function renderTable(
  rows: readonly Record<string, unknown>[],
  columns?: readonly string[],
  options: { width?: number | undefined } = { width: terminalWidth() },
): string {
  const cols = columns ?? (rows[0] ? Object.keys(rows[0]) : []);
  if (cols.length === 0) return "(no rows)\n";
  const cell = (v: unknown): string =>
    v === null || v === undefined ? "" : typeof v === "string" ? v : JSON.stringify(v);
  const body = rows.map((row) => cols.map((c) => cell(row[c])));
  const widths = cols.map((c, i) => Math.max(c.length, ...body.map((r) => r[i]!.length)));
  const last = cols.length - 1;
  const before = widths.slice(0, last).reduce((sum, w) => sum + w + 2, 0);
  const room = options.width === undefined ? undefined : options.width - before;
  const wrapAt = room !== undefined && room >= MIN_WRAP && widths[last]! > room ? room : undefined;
  if (wrapAt !== undefined) widths[last] = Math.max(cols[last]!.length, wrapAt);
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  const rowLines = (cells: readonly string[]): string[] => {
    if (wrapAt === undefined) return [line(cells)];
    const [first = "", ...rest] = wrapText(cells[last]!, wrapAt);
    const blank = cells.slice(0, last).map(() => "");
    return [line([...cells.slice(0, last), first]), ...rest.map((part) => line([...blank, part]))];
  };
  const out = [line(cols), line(widths.map((w) => "-".repeat(w))), ...body.flatMap(rowLines)];
  out.push(`(${rows.length} row${rows.length === 1 ? "" : "s"})`);
  return out.join("\n") + "\n";
}

/** `text` in lines of at most `width`, broken at spaces (a longer word is cut). */
function wrapText(text: string, width: number): string[] {
  const lines: string[] = [];
  let current = "";
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    if (current === "") current = word;
    else if (current.length + 1 + word.length <= width) current += ` ${word}`;
    else {
      lines.push(current);
      current = word;
    }
    while (current.length > width) {
      lines.push(current.slice(0, width));
      current = current.slice(width);
    }
  }
  lines.push(current);
  return lines;
}
