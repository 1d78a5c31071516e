/**
 * The local side of a client-built backup: a new DuckDB file that receives the schema
 * (DDL run as given) and then each table's rows as Arrow record batches, appended through
 * the DuckDB Appender in DataChunks with every value converted exactly (arrow-to-duckdb.ts).
 * `natsmon backup` uses it; it is the CLI's only way into DuckDB (DuckDB stays in catalog/).
 *
 * The chunk protocol carries the types Arrow has no plain equivalent for (LIST, STRUCT, MAP,
 * UHUGEINT, INTERVAL, UUID, …) as text rendered like db.query, JSON for nested values (field
 * metadata `natsmon.encoding`). Such a table is appended to a temporary staging table with
 * VARCHAR in those columns, then moved into its table with DuckDB's own casts
 * (`text::JSON::BIGINT[]`, `text::UHUGEINT`), so DuckDB, not this code, parses them back.
 */
import {
  DuckDBDataChunk,
  DuckDBInstance,
  DuckDBTypeId,
  type DuckDBAppender,
  type DuckDBConnection,
  type DuckDBValue,
} from "@duckdb/node-api";
import { Type, type Data, type DataType, type Field, type RecordBatch } from "apache-arrow";
import { ArrowFieldMetadata } from "../protocol/index.ts";
import duckdb from "@duckdb/node-bindings";
import { reconcileBackup, type BackupCut, type ReconcileResult } from "./backup-reconcile.ts";
import { isValidAt, readerFor, sameLayoutWidth, type ValueReader } from "./arrow-to-duckdb.ts";

/** Marks a BOOLEAN column in `widths`: Arrow packs bits, DuckDB keeps a byte per value. */
const BOOLEAN_WIDTH = -1;

/** DuckDB's vector size: a DataChunk holds at most this many rows. */
const CHUNK_ROWS = 2048;

export interface BackupFile extends AsyncDisposable {
  readonly path: string;
  /** Runs one or more statements (schemas, tables, comments, views). */
  run(sql: string): Promise<void>;
  /** Starts appending rows to `schema.table`, which must exist. */
  appendTo(schema: string, table: string): Promise<TableAppender>;
  /** Brings the copied tables to one cut (backup-reconcile.ts), in one transaction. */
  reconcile(cut: BackupCut): Promise<ReconcileResult>;
  /** Checkpoints and closes the file; the instance is unusable afterwards. */
  close(): Promise<void>;
}

export interface TableAppender {
  /** Appends the batch's rows; its columns must match the table's by position and name. */
  append(batch: RecordBatch): Promise<void>;
  /** Flushes and closes the appender; the rows are committed. */
  finish(): Promise<void>;
  /** Discards what was not committed (after a failure). */
  abandon(): void;
}

/** Creates a new DuckDB file at `path` (which must not exist) for a backup. */
export async function createBackupFile(path: string): Promise<BackupFile> {
  const instance = await DuckDBInstance.create(path, {
    // The rows come from the bus; nothing in a backup needs another file or an extension.
    enable_external_access: "false",
    autoinstall_known_extensions: "false",
    autoload_known_extensions: "false",
  });
  let con;
  try {
    con = await instance.connect();
    await con.run("SET TimeZone = 'UTC'");
  } catch (err) {
    instance.closeSync();
    throw err;
  }
  const connection = con;
  let closed = false;
  let staged = 0;
  return {
    path,
    run: async (sql) => {
      await connection.run(sql);
    },
    appendTo: async (schema, table) => {
      const columns = (
        await connection.runAndReadAll(
          `SELECT column_name, data_type FROM duckdb_columns()
            WHERE database_name = current_database() AND schema_name = $1 AND table_name = $2
            ORDER BY column_index`,
          [schema, table],
        )
      ).getRowsJS() as [string, string][];
      return tableAppender(connection, { schema, table, columns, stage: `backup_stage_${++staged}` });
    },
    reconcile: async (cut) => {
      await connection.run("BEGIN TRANSACTION");
      try {
        const result = await reconcileBackup(connection, cut);
        await connection.run("COMMIT");
        return result;
      } catch (err) {
        await connection.run("ROLLBACK").catch(() => undefined);
        throw err;
      }
    },
    close: async () => {
      if (closed) return;
      closed = true;
      try {
        await connection.run("CHECKPOINT");
      } finally {
        connection.closeSync();
        instance.closeSync();
      }
    },
    [Symbol.asyncDispose]: () => {
      if (!closed) {
        // Disposal after a failure: release the file without the checkpoint's cost.
        closed = true;
        connection.closeSync();
        instance.closeSync();
      }
      return Promise.resolve();
    },
  };
}

interface TargetTable {
  readonly schema: string;
  readonly table: string;
  /** [name, DuckDB type as SQL] in table order. */
  readonly columns: readonly [string, string][];
  /** Name of the staging table, if the stream sends some columns as text. */
  readonly stage: string;
}

function ident(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

type TextEncoding = "json" | "text";

/**
 * How a column arrives as text to be cast back (see the file comment), or undefined when it
 * arrives in its own type: the field's `natsmon.encoding` metadata says so; without it, a
 * Utf8 field for a column that is not VARCHAR is taken as JSON for nested types, else text.
 */
function textEncoding(field: Field, sqlType: string): TextEncoding | undefined {
  const declared = field.metadata.get(ArrowFieldMetadata.Encoding);
  if (declared === "json" || declared === "text") return declared;
  const typeId = (field.type as DataType).typeId;
  const utf8 = typeId === Type.Utf8 || typeId === Type.LargeUtf8;
  if (!utf8 || sqlType === "VARCHAR") return undefined;
  return /[[\]]|^(STRUCT|MAP|UNION)\(/.test(sqlType) ? "json" : "text";
}

function castBack(column: string, sqlType: string, encoding: TextEncoding): string {
  return encoding === "json"
    ? `CAST(${ident(column)}::JSON AS ${sqlType})`
    : `CAST(${ident(column)} AS ${sqlType})`;
}

function tableAppender(con: DuckDBConnection, target: TargetTable): TableAppender {
  const name = `${target.schema}.${target.table}`;
  const columns = target.columns.map(([c]) => c);
  let state:
    | {
        appender: DuckDBAppender;
        readers: ValueReader[];
        types: ReturnType<DuckDBAppender["columnType"]>[];
        /** Byte width of the columns copied as they are (sameLayoutWidth). */
        widths: (number | undefined)[];
        staged: boolean;
        /** How each column arrives as text, if it does. */
        text: (TextEncoding | undefined)[];
      }
    | undefined;
  let done = false;

  const open = async (batch: RecordBatch) => {
    const fields = batch.schema.fields;
    const names = fields.map((f) => f.name);
    if (names.join("\u0000") !== columns.join("\u0000")) {
      throw new Error(
        `${name}: the stream's columns (${names.join(", ")}) are not the table's (${columns.join(", ")})`,
      );
    }
    const text = fields.map((f, c) => textEncoding(f, target.columns[c]![1]));
    const staged = text.some((t) => t !== undefined);
    if (staged) {
      const defs = target.columns.map(([c, t], i) => `${ident(c)} ${text[i] ? "VARCHAR" : t}`);
      await con.run(`CREATE TEMP TABLE ${ident(target.stage)} (${defs.join(", ")})`);
    }
    const appender = staged
      ? await con.createAppender(target.stage, "main", "temp")
      : await con.createAppender(target.table, target.schema);
    const types = columns.map((_, c) => appender.columnType(c));
    const readers = fields.map((f, c) => readerFor(f.type as DataType, types[c]!, `${name}.${f.name}`));
    const widths = fields.map((f, c) =>
      (f.type as DataType).typeId === Type.Bool && types[c]!.typeId === DuckDBTypeId.BOOLEAN
        ? BOOLEAN_WIDTH
        : sameLayoutWidth(f.type as DataType, types[c]!),
    );
    return { appender, readers, types, widths, staged, text };
  };

  return {
    async append(batch) {
      state ??= await open(batch);
      const { appender, readers, types, widths } = state;
      const columnData = columns.map((_, c) => batch.data.children[c]!);
      for (let start = 0; start < batch.numRows; start += CHUNK_ROWS) {
        const rows = Math.min(CHUNK_ROWS, batch.numRows - start);
        const chunk = DuckDBDataChunk.create(types, rows);
        columnData.forEach((data, c) => {
          const width = widths[c];
          if (width === BOOLEAN_WIDTH) {
            copyBooleans(duckdb.data_chunk_get_vector(chunk.chunk, c), data, start, rows);
            return;
          }
          if (width !== undefined) {
            copyFixedWidth(duckdb.data_chunk_get_vector(chunk.chunk, c), data, start, rows, width);
            return;
          }
          const read = readers[c]!;
          const values = new Array<DuckDBValue>(rows);
          for (let r = 0; r < rows; r++) {
            const i = start + r;
            values[r] = isValidAt(data, i) ? read(data, i) : null;
          }
          chunk.setColumnValues(c, values);
        });
        appender.appendDataChunk(chunk);
      }
    },
    async finish() {
      if (done) return;
      done = true;
      if (!state) return;
      state.appender.flushSync();
      state.appender.closeSync();
      if (state.staged) {
        const { text } = state;
        const exprs = target.columns.map(([c, t], i) => {
          const encoding = text[i];
          return encoding ? castBack(c, t, encoding) : ident(c);
        });
        await con.run(
          `INSERT INTO ${ident(target.schema)}.${ident(target.table)} SELECT ${exprs.join(", ")} FROM temp.main.${ident(target.stage)}`,
        );
        await con.run(`DROP TABLE temp.main.${ident(target.stage)}`);
      }
    },
    abandon() {
      if (done) return;
      done = true;
      try {
        state?.appender.clear();
        state?.appender.closeSync();
      } catch {
        // The file is removed after a failure; an appender that will not close changes nothing.
      }
    },
  };
}

/**
 * Copies rows [start, start + rows) of a fixed-width Arrow column into a DuckDB vector as
 * bytes: the values (same layout, see sameLayoutWidth) and the validity bitmap (Arrow's and
 * DuckDB's are both LSB-first bits), a byte-aligned bitmap in one copy.
 */
function copyFixedWidth(vector: duckdb.Vector, data: Data, start: number, rows: number, width: number): void {
  const values = data.values as Uint8Array;
  duckdb.copy_data_to_vector(
    vector,
    0,
    values.buffer as ArrayBuffer,
    values.byteOffset + start * width,
    rows * width,
  );
  copyValidity(vector, data, start, rows);
}

/** Unpacks an Arrow boolean column's bits (never sliced: offset applies) into DuckDB's bytes. */
function copyBooleans(vector: duckdb.Vector, data: Data, start: number, rows: number): void {
  const packed = data.values as Uint8Array;
  const bytes = new Uint8Array(rows);
  for (let r = 0; r < rows; r++) {
    const j = data.offset + start + r;
    bytes[r] = (packed[j >> 3]! >> (j & 7)) & 1;
  }
  duckdb.copy_data_to_vector(vector, 0, bytes.buffer, 0, rows);
  copyValidity(vector, data, start, rows);
}

/** The validity bits of rows [start, start + rows): Arrow's and DuckDB's are both LSB-first. */
function copyValidity(vector: duckdb.Vector, data: Data, start: number, rows: number): void {
  if (data.nullCount === 0) return;
  const first = data.offset + start;
  let bits = data.nullBitmap;
  let byteOffset = first >> 3;
  if (first % 8 !== 0) {
    // Not byte-aligned (a batch sliced off a larger one): rebuild the bits from row 0.
    bits = new Uint8Array(Math.ceil(rows / 8));
    for (let r = 0; r < rows; r++) if (isValidAt(data, start + r)) bits[r >> 3]! |= 1 << (r & 7);
    byteOffset = 0;
  }
  duckdb.vector_ensure_validity_writable(vector);
  duckdb.copy_data_to_vector_validity(
    vector,
    0,
    bits.buffer as ArrayBuffer,
    bits.byteOffset + byteOffset,
    Math.ceil(rows / 8),
  );
}
