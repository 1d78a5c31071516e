/**
 * The text formats of `natsmon query`, written batch by batch so a result of any size
 * streams through without being held whole (the table keeps only its first rows, to align
 * them). Each writer turns cells (arrow-values.ts) into text and does no I/O itself.
 *
 * - json: an array of objects keyed by column name in the result's order, one row per
 *   line. A repeated column name gets the first free suffix `_1`, `_2`, … as in db.query.
 * - csv (RFC 4180): a header row with the names as given (CSV is positional), CRLF line
 *   ends; NULL is an empty field and the empty string `""`; a field holding a comma, quote,
 *   CR or LF is quoted with quotes doubled; lists and objects are their JSON text.
 * - table: aligned columns for a terminal, numbers to the right, NULL shown as `NULL`,
 *   then the row count.
 */
import type { Cell, CellReader } from "./arrow-values.ts";
import { uniqueNames } from "../lib/index.ts";

export type TextFormat = "json" | "csv" | "table";

export interface ResultWriter {
  /**
   * Text for the start of the output, once the columns are known. `numeric` says which
   * columns hold numbers (the table aligns them right); without it the table decides from
   * the values.
   */
  begin(columns: readonly string[], numeric?: readonly boolean[]): string;
  /** Text for rows `from` (inclusive) to `to` (exclusive), read through `readers`. */
  rows(readers: readonly CellReader[], from: number, to: number): string;
  /** Text for the end of the output. */
  end(): string;
}

export function resultWriter(format: TextFormat): ResultWriter {
  switch (format) {
    case "json":
      return jsonWriter();
    case "csv":
      return csvWriter();
    case "table":
      return tableWriter();
  }
}

/** Readers over rows already held as arrays of cells (the db.query fallback, tests). */
export function arrayReaders(rows: readonly (readonly Cell[])[], columns: number): CellReader[] {
  return Array.from({ length: columns }, (_, c) => (i: number) => rows[i]![c] ?? null);
}

export function jsonWriter(): ResultWriter {
  let keys: string[] = [];
  let first = true;
  return {
    begin(columns) {
      // Key prefixes are built once; JSON.stringify of each value does the escaping.
      keys = uniqueNames(columns).map((name) => `${JSON.stringify(name)}:`);
      return "[";
    },
    rows(readers, from, to) {
      let out = "";
      for (let r = from; r < to; r++) {
        let row = first ? "\n{" : ",\n{";
        first = false;
        for (let c = 0; c < readers.length; c++) {
          row += (c === 0 ? "" : ",") + keys[c]! + JSON.stringify(readers[c]!(r));
        }
        out += row + "}";
      }
      return out;
    },
    end: () => (first ? "]\n" : "\n]\n"),
  };
}

export function csvWriter(): ResultWriter {
  return {
    begin: (columns) => columns.map(quoteField).join(",") + "\r\n",
    rows(readers, from, to) {
      let out = "";
      for (let r = from; r < to; r++) {
        let line = "";
        for (let c = 0; c < readers.length; c++) line += (c === 0 ? "" : ",") + csvField(readers[c]!(r));
        out += line + "\r\n";
      }
      return out;
    },
    end: () => "",
  };
}

/** One CSV field of a cell. */
export function csvField(value: Cell): string {
  if (value === null) return "";
  if (typeof value === "string") return value === "" ? '""' : quoteField(value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return quoteField(JSON.stringify(value));
}

function quoteField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * Rows held back to align the table. A longer result is aligned on its first rows and the
 * rest stream out in those widths (a wider cell pushes its row out), so memory stays bounded.
 */
export const TABLE_ALIGN_ROWS = 10_000;

export function tableWriter(alignRows = TABLE_ALIGN_ROWS): ResultWriter {
  let columns: readonly string[] = [];
  let held: string[][] | undefined = [];
  let widths: number[] = [];
  /**
   * A column is right-aligned when its type is numeric, or, with no types given, when every
   * value in it so far is a number (NULLs aside).
   */
  let numeric: boolean[] = [];
  let seen: boolean[] = [];
  let typed = false;
  let total = 0;
  const line = (cells: readonly string[], align = true) => {
    let out = "";
    for (let c = 0; c < cells.length; c++) {
      const cell = cells[c]!;
      const pad = widths[c]! - cell.length;
      const padding = pad > 0 ? " ".repeat(pad) : "";
      out += (c === 0 ? "" : "  ") + (align && numeric[c] ? padding + cell : cell + padding);
    }
    return out.trimEnd() + "\n";
  };
  const flush = () => {
    const rows = held ?? [];
    held = undefined;
    if (!typed) numeric = numeric.map((n, c) => n && seen[c]!);
    widths = columns.map((name, c) => {
      let width = name.length;
      for (const row of rows) width = Math.max(width, row[c]!.length);
      return width;
    });
    let out =
      line(columns, false) +
      line(
        widths.map((w) => "-".repeat(w)),
        false,
      );
    for (const row of rows) out += line(row);
    return out;
  };
  return {
    begin(names, types) {
      columns = names.map(escapeControls);
      typed = types !== undefined;
      numeric = names.map((_, c) => types?.[c] ?? true);
      seen = names.map(() => false);
      return "";
    },
    rows(readers, from, to) {
      let out = "";
      for (let r = from; r < to; r++) {
        const row: string[] = [];
        for (let c = 0; c < readers.length; c++) {
          const value = readers[c]!(r);
          if (held && !typed && value !== null) {
            if (typeof value === "number") seen[c] = true;
            else numeric[c] = false;
          }
          row.push(tableText(value));
        }
        total++;
        if (held) {
          held.push(row);
          if (held.length >= alignRows) out += flush();
        } else {
          out += line(row);
        }
      }
      return out;
    },
    end() {
      if (columns.length === 0) return "(no columns)\n";
      return (held ? flush() : "") + `(${total} row${total === 1 ? "" : "s"})\n`;
    },
  };
}

function tableText(value: Cell): string {
  if (value === null) return "NULL";
  if (typeof value === "number") return String(value);
  return escapeControls(typeof value === "string" ? value : JSON.stringify(value));
}

// Matching control characters is the point here.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/g;
const SHORT_ESCAPES: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/**
 * Control characters would break the alignment (or the terminal), so a table shows them
 * escaped, in values and column names alike: \n, \r, \t, and \xNN for the rest (NUL is \x00).
 */
function escapeControls(text: string): string {
  return text.replace(
    CONTROL,
    (c) => SHORT_ESCAPES[c] ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`,
  );
}
