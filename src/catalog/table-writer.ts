/**
 * Rows for the hx tables, buffered during a fold and written with the DuckDB Appender in
 * DataChunks. Column names and types come from the database itself (read at open), so
 * the fold writes exactly what the migrations created, and a row naming a column the
 * table does not have is a bug that fails loudly.
 */
import {
  DuckDBDataChunk,
  DuckDBStructType,
  type DuckDBAppender,
  type DuckDBConnection,
  type DuckDBType,
  type DuckDBValue,
} from "@duckdb/node-api";
import { converterFor, refusal, REFUSED, type FastConverter } from "./values.ts";

/** A table as the database has it: its columns in order, with their types. */
export interface TableShape {
  readonly name: string;
  readonly columns: readonly string[];
  readonly types: readonly DuckDBType[];
  /** Column name → position. */
  readonly index: ReadonlyMap<string, number>;
  /** Per column, the converter of its type. */
  readonly converters: readonly FastConverter[];
  /** Per column, whether it is NOT NULL: a row with NULL there is left out, never appended. */
  readonly notNull: readonly boolean[];
}

export type TableShapes = ReadonlyMap<string, TableShape>;

/** A row as the fold builds it: column name → parsed JSON value (absent → NULL). */
export type PlainRow = Readonly<Record<string, unknown>>;

/** DuckDB's vector size: a DataChunk holds at most this many rows. */
const CHUNK_ROWS = 2048;

/** Reads the shape of every base table in `hx` (hx.migrations aside: the runner owns it). */
export async function loadTableShapes(con: DuckDBConnection): Promise<TableShapes> {
  const names = (
    await con.runAndReadAll(
      "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'hx' AND table_name <> 'migrations' ORDER BY table_name",
    )
  )
    .getRowsJS()
    .map(([name]) => (typeof name === "string" ? name : ""));
  // From the tables' constraints: duckdb_columns() would bind every view to list its columns too.
  const required = new Set(
    (
      await con.runAndReadAll(
        `SELECT table_name || '.' || unnest(constraint_column_names) FROM duckdb_constraints()
          WHERE schema_name = 'hx' AND constraint_type = 'NOT NULL'`,
      )
    )
      .getRowsJS()
      .map(([column]) => (typeof column === "string" ? column : "")),
  );
  // Every table's row as one STRUCT column, in one statement: a statement per table (about
  // 50) cost most of a catalog's open.
  const rows = await con.runAndReadAll(
    `SELECT ${names.map((name) => `(SELECT t FROM hx."${name}" t LIMIT 0) AS "${name}"`).join(", ")} LIMIT 0`,
  );
  const shapes = new Map<string, TableShape>();
  names.forEach((name, i) => {
    const row = rows.columnType(i);
    if (!(row instanceof DuckDBStructType)) throw new Error(`hx.${name} did not read as a row`);
    const columns = row.entryNames;
    const types = row.entryTypes;
    const converters = types.map((type, k) => {
      const converter = converterFor(type);
      if (!converter) {
        throw new Error(`hx.${name}.${columns[k]} has type ${type.toString()}, which the fold cannot write`);
      }
      return converter;
    });
    const notNull = columns.map((c) => required.has(`${name}.${c}`));
    const index = new Map(columns.map((c, k) => [c, k]));
    shapes.set(name, { name, columns, types, index, converters, notNull });
  });
  return shapes;
}

/**
 * The rows one fold writes to one table. `add` converts and checks every value at once,
 * so the fold can compare converted rows (the _opts change test) before anything is written.
 */
export class RowBuffer {
  readonly shape: TableShape;
  readonly rows: DuckDBValue[][] = [];
  /** The rows' DataChunks, once `prepare` has filled them. */
  private chunks: DuckDBDataChunk[] | undefined;

  constructor(shape: TableShape) {
    this.shape = shape;
  }

  /**
   * Converts `row` to the table's column order. A value that does not fit its column
   * becomes NULL and is reported through `problem` with `what` naming the entity.
   */
  convert(row: PlainRow, what: string, problem: (message: string) => void): DuckDBValue[] {
    const { index, converters } = this.shape;
    const out: DuckDBValue[] = new Array<DuckDBValue>(converters.length).fill(null);
    for (const column in row) {
      const value = row[column];
      const i = index.get(column);
      if (i === undefined) throw new Error(`hx.${this.shape.name} has no column ${column}`);
      if (value === undefined || value === null) continue;
      const converted = converters[i]!(value);
      if (converted !== REFUSED) out[i] = converted;
      else {
        const reason = refusal(this.shape.types[i]!, value);
        problem(`${what}: hx.${this.shape.name}.${column}: ${reason}; stored NULL`);
      }
    }
    return out;
  }

  /** Sets a column of a converted row to a value already of its type (a pk, the epoch). */
  set(values: DuckDBValue[], column: string, value: DuckDBValue): void {
    const i = this.shape.index.get(column);
    if (i === undefined) throw new Error(`hx.${this.shape.name} has no column ${column}`);
    values[i] = value;
  }

  /**
   * Buffers a converted row, unless a NOT NULL column of it is NULL (a value that did not
   * convert there, or none given): such a row would fail the append and with it the whole
   * epoch, on every retry. It is left out and reported through `problem` instead.
   */
  push(values: DuckDBValue[], what: string, problem: (message: string) => void): boolean {
    const missing = this.missing(values);
    if (missing !== undefined) {
      problem(`${what}: hx.${this.shape.name}.${missing} has no value; the row is left out`);
      return false;
    }
    this.chunks = undefined;
    this.rows.push(values);
    return true;
  }

  /** The first NOT NULL column that is NULL in `values`, if any. */
  missing(values: readonly DuckDBValue[]): string | undefined {
    const { notNull, columns } = this.shape;
    for (let i = 0; i < notNull.length; i++) if (notNull[i] && values[i] === null) return columns[i];
    return undefined;
  }

  /**
   * Why `row` cannot be an entity's identity, if it cannot: a value that does not convert
   * to its column's type, or no value for a NOT NULL column (columns in `filled` are set
   * later, by the fold). An _ident row is written once and never corrected, and its natural
   * key must read back as it was built; so such an entity is left out, not stored with NULL.
   */
  unfit(row: PlainRow, filled: ReadonlySet<string>): string | undefined {
    const { columns, converters, notNull, types } = this.shape;
    for (let i = 0; i < columns.length; i++) {
      const column = columns[i]!;
      if (filled.has(column)) continue;
      const value = row[column];
      if (value === undefined || value === null) {
        if (notNull[i]) return `hx.${this.shape.name}.${column} has no value`;
        continue;
      }
      const converted = converters[i]!(value);
      if (converted === REFUSED) return `hx.${this.shape.name}.${column}: ${refusal(types[i]!, value)}`;
      if (converted === null && notNull[i]) return `hx.${this.shape.name}.${column} has no value`;
    }
    return undefined;
  }

  /** Orders rows by an integer column (the entity pk), so each epoch's rows are stored sorted. */
  sortBy(column: string): void {
    const i = this.shape.index.get(column);
    if (i === undefined) throw new Error(`hx.${this.shape.name} has no column ${column}`);
    this.chunks = undefined;
    this.rows.sort((a, b) => Number(a[i]) - Number(b[i]));
  }

  /**
   * Fills the DataChunks of the buffered rows ahead of `appendTo`. Touches no connection, so
   * the fold can do it while its connection runs a statement. Rows pushed later are not in them.
   */
  prepare(): DuckDBDataChunk[] {
    const chunks: DuckDBDataChunk[] = [];
    for (let start = 0; start < this.rows.length; start += CHUNK_ROWS) {
      const slice = this.rows.slice(start, start + CHUNK_ROWS);
      const chunk = DuckDBDataChunk.create(this.shape.types, slice.length);
      chunk.setColumns(this.shape.columns.map((_c, i) => slice.map((row) => row[i] ?? null)));
      chunks.push(chunk);
    }
    this.chunks = chunks;
    return chunks;
  }

  /**
   * Appends every buffered row inside the caller's transaction. Constraint violations may
   * surface at flush or at close; either way the error is thrown, and the caller rolls
   * the transaction back (DuckDB would otherwise let COMMIT "succeed" as a rollback).
   */
  async appendTo(con: DuckDBConnection): Promise<number> {
    if (this.rows.length === 0) return 0;
    const chunks = this.chunks ?? this.prepare();
    this.chunks = undefined;
    const appender = await con.createAppender(this.shape.name, "hx");
    let error: Error | undefined;
    try {
      for (const chunk of chunks) appender.appendDataChunk(chunk);
      appender.flushSync();
    } catch (err) {
      error = asError(err);
    }
    if (error !== undefined) dropRows(appender);
    try {
      // Closing flushes too, so it can fail as well; the first error is the one to report.
      appender.closeSync();
    } catch (err) {
      error ??= asError(err);
      dropRows(appender);
    }
    if (error !== undefined) throw error;
    return this.rows.length;
  }
}

/**
 * Drops the rows of an appender that failed. Left in it, they would be flushed again when
 * the appender is garbage-collected, inside whatever transaction its connection is in by
 * then, aborting that one ("Current transaction is aborted") at a moment chosen by the GC.
 */
function dropRows(appender: DuckDBAppender): void {
  try {
    appender.clear();
  } catch {
    // Nothing left to drop.
  }
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
