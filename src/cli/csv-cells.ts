/**
 * Reads db.query's CSV reply (RFC 4180, header row) back into cells, for the table shown
 * when `natsmon query` falls back to db.query. CSV rather than JSON because it keeps the
 * columns in the result's order (a JSON object puts integer-like keys such as "1" first)
 * and repeated names apart. An unquoted empty field is NULL and `""` the empty string, as
 * db.query writes them; an unquoted field whose text is a number's own text is a number.
 */
import type { Cell } from "./arrow-values.ts";

export interface CsvResult {
  columns: string[];
  rows: Cell[][];
}

export function parseCsvResult(text: string): CsvResult {
  const records: Cell[][] = [];
  let record: Cell[] = [];
  let i = 0;
  const n = text.length;
  // An empty body has no header at all: no columns.
  if (n === 0) return { columns: [], rows: [] };
  for (;;) {
    let cell: Cell;
    if (text[i] === '"') {
      let value = "";
      i++;
      for (;;) {
        const quote = text.indexOf('"', i);
        if (quote < 0) throw new Error("the CSV reply ends inside a quoted field");
        value += text.slice(i, quote);
        i = quote + 1;
        if (text[i] === '"') {
          value += '"';
          i++;
        } else break;
      }
      cell = value;
    } else {
      let end = i;
      while (end < n && text[end] !== "," && text[end] !== "\r" && text[end] !== "\n") end++;
      const raw = text.slice(i, end);
      i = end;
      cell = raw === "" ? null : String(Number(raw)) === raw ? Number(raw) : raw;
    }
    record.push(cell);
    if (text[i] === ",") {
      i++;
      continue;
    }
    if (text[i] === "\r") i++;
    if (text[i] === "\n") i++;
    records.push(record);
    record = [];
    if (i >= n) break;
  }
  const [header = [], ...rows] = records;
  return {
    columns: header.map((c) => (c === null ? "" : typeof c === "number" ? String(c) : (c as string))),
    rows,
  };
}
