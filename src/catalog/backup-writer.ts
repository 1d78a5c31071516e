/**
 * The local side of a client-built backup: a new DuckDB file that receives the schema
 * (DDL run as given) and then each table's rows as Arrow record batches, appended through
 * the DuckDB Appender in DataChunks with every value converted exactly (arrow-to-duckdb.ts).
 * `natsmon backup` uses it; it is the CLI's only way into DuckDB (DuckDB stays in catalog/).
 */
import { DuckDBDataChunk, DuckDBInstance, type DuckDBAppender, type DuckDBValue } from "@duckdb/node-api";
import type { DataType, RecordBatch } from "apache-arrow";
import { isValidAt, readerFor, type ValueReader } from "./arrow-to-duckdb.ts";

/** DuckDB's vector size: a DataChunk holds at most this many rows. */
const CHUNK_ROWS = 2048;

export interface BackupFile extends AsyncDisposable {
  readonly path: string;
  /** Runs one or more statements (schemas, tables, comments, views). */
  run(sql: string): Promise<void>;
  /** Starts appending rows to `schema.table`, which must exist. */
  appendTo(schema: string, table: string): Promise<TableAppender>;
  /** Checkpoints and closes the file; the instance is unusable afterwards. */
  close(): Promise<void>;
}

export interface TableAppender {
  /** Appends the batch's rows; its columns must match the table's by position and name. */
  append(batch: RecordBatch): void;
  /** Flushes and closes the appender; the rows are committed. */
  finish(): void;
  /** Discards the appender without flushing (after a failure). */
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
  const close = async () => {
    if (closed) return;
    closed = true;
    try {
      await connection.run("CHECKPOINT");
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  };
  return {
    path,
    run: async (sql) => {
      await connection.run(sql);
    },
    appendTo: async (schema, table) => {
      const names = (
        await connection.runAndReadAll(
          `SELECT column_name FROM duckdb_columns()
            WHERE database_name = current_database() AND schema_name = $1 AND table_name = $2
            ORDER BY column_index`,
          [schema, table],
        )
      ).getRowsJS() as [string][];
      return tableAppender(
        await connection.createAppender(table, schema),
        `${schema}.${table}`,
        names.map(([n]) => n),
      );
    },
    close,
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

function tableAppender(appender: DuckDBAppender, table: string, columns: readonly string[]): TableAppender {
  const types = columns.map((_, c) => appender.columnType(c));
  let readers: ValueReader[] | undefined;
  let done = false;
  return {
    append(batch) {
      if (!readers) {
        const fields = batch.schema.fields;
        const names = fields.map((f) => f.name);
        if (names.join("\u0000") !== columns.join("\u0000")) {
          throw new Error(
            `${table}: the stream's columns (${names.join(", ")}) are not the table's (${columns.join(", ")})`,
          );
        }
        readers = fields.map((f, c) => readerFor(f.type as DataType, types[c]!, `${table}.${f.name}`));
      }
      const columnData = columns.map((_, c) => batch.data.children[c]!);
      for (let start = 0; start < batch.numRows; start += CHUNK_ROWS) {
        const rows = Math.min(CHUNK_ROWS, batch.numRows - start);
        const chunk = DuckDBDataChunk.create(types, rows);
        chunk.setColumns(
          columnData.map((data, c) => {
            const read = readers![c]!;
            const values = new Array<DuckDBValue>(rows);
            for (let r = 0; r < rows; r++) {
              const i = start + r;
              values[r] = isValidAt(data, i) ? read(data, i) : null;
            }
            return values;
          }),
        );
        appender.appendDataChunk(chunk);
      }
    },
    finish() {
      if (done) return;
      done = true;
      appender.flushSync();
      appender.closeSync();
    },
    abandon() {
      if (done) return;
      done = true;
      try {
        appender.clear();
        appender.closeSync();
      } catch {
        // The file is removed after a failure; an appender that will not close changes nothing.
      }
    },
  };
}
