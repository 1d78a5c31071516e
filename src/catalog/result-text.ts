/**
 * The two buffered db.query formats, built row by row from rendered values (render.ts).
 *
 * JSON: an array of objects keyed by column name, keys in the result's column order. JSON
 * objects cannot hold two equal keys, so a repeated column name gets the first free suffix
 * `_1`, `_2`, … (a name that is already unique is never changed).
 *
 * CSV (RFC 4180): a header row with the column names exactly as DuckDB gives them (repeats
 * included: CSV is positional), CRLF line ends, a CRLF after the last record. NULL is an
 * empty field and an empty string is `""`, so the two stay apart. A field is quoted when it
 * holds a comma, a double quote, CR or LF, with quotes doubled. Lists, structs and maps are
 * written as their JSON text.
 */
import type { JsonValue } from "./render.ts";
import { uniqueNames } from "../lib/index.ts";

export interface ResultText {
  addRow(values: readonly JsonValue[]): void;
  text(): string;
}

export function jsonText(columns: readonly string[]): ResultText {
  // Key prefixes are built once; JSON.stringify of each value does the escaping.
  const keys = uniqueNames(columns).map((name) => `${JSON.stringify(name)}:`);
  const rows: string[] = [];
  return {
    addRow(values) {
      rows.push(`{${values.map((v, i) => keys[i]! + JSON.stringify(v)).join(",")}}`);
    },
    text: () => `[${rows.join(",")}]`,
  };
}

export function csvText(columns: readonly string[]): ResultText {
  const lines = [columns.map((c) => quoteField(c)).join(",")];
  return {
    addRow(values) {
      lines.push(values.map(csvField).join(","));
    },
    text: () => `${lines.join("\r\n")}\r\n`,
  };
}

/** One CSV field of a rendered value. */
export function csvField(value: JsonValue): string {
  if (value === null) return "";
  if (typeof value === "string") return value === "" ? '""' : quoteField(value);
  if (typeof value === "number" || typeof value === "boolean") return JSON.stringify(value);
  return quoteField(JSON.stringify(value));
}

function quoteField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
