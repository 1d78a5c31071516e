import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { connect } from "@nats-io/transport-node";
import { headers, type NatsConnection } from "@nats-io/nats-core";
import { Field, Int32, RecordBatch, Schema, makeData, Struct, vectorFromArray } from "apache-arrow";
import { createBackupFile } from "../../../src/catalog/index.ts";
import { copyTable, createViews } from "../../../src/cli/backup-copy.ts";
import type { PlannedTable, PlannedView } from "../../../src/cli/backup-plan.ts";
import { BackupProgress } from "../../../src/cli/backup-progress.ts";
import { IpcMessageEncoder } from "../../../src/lib/index.ts";
import { StreamHeader, StreamMessageKind, type StreamEndTrailer } from "../../../src/protocol/index.ts";
import { startTestServer } from "../../harness/start-nats-server.ts";
import { tempDir } from "../../harness/temp-dir.ts";

const TABLE: PlannedTable = {
  schema: "main",
  name: "t",
  ddl: "CREATE TABLE main.t (i INTEGER)",
  comment: null,
  columnComments: [],
  estimatedRows: 0,
  cutByWindow: false,
};

/** Two rows of `main.t`. */
function twoRows(): RecordBatch {
  const i = vectorFromArray([1, 2], new Int32()).data[0]!;
  const fields = [new Field("i", new Int32(), true)];
  return new RecordBatch(
    new Schema(fields),
    makeData({ type: new Struct(fields), length: 2, nullCount: 0, children: [i] }),
  );
}

/**
 * Serves `subject` with the chunk protocol as a node would, sending one batch of two rows
 * and an end trailer that announces `announcedRows`.
 */
function serveTwoRows(nc: NatsConnection, subject: string, announcedRows: number): void {
  nc.subscribe(subject, {
    callback: (_err, msg) => {
      const batch = twoRows();
      const encoder = new IpcMessageEncoder(batch.schema, "none");
      const send = (kind: string, body: Uint8Array, seq?: number) => {
        const h = headers();
        h.set(StreamHeader.Kind, kind);
        if (seq !== undefined) h.set(StreamHeader.Seq, String(seq));
        if (seq === 1) h.set(StreamHeader.Ack, `${subject}.acks`);
        nc.publish(msg.reply!, body, { headers: h });
      };
      const schema = encoder.schemaMessage;
      const rows = encoder.encode(batch);
      send(StreamMessageKind.Chunk, schema, 1);
      send(StreamMessageKind.Chunk, rows, 2);
      const trailer: StreamEndTrailer = {
        status: "end",
        rows: announcedRows,
        chunks: 2,
        bytes: schema.byteLength + rows.byteLength,
      };
      send(StreamMessageKind.End, new TextEncoder().encode(JSON.stringify(trailer)));
    },
  });
}

/** Rows of `main.t` in a closed backup file, read as a user would. */
async function countRows(path: string): Promise<number> {
  const instance = await DuckDBInstance.create(path, { access_mode: "READ_ONLY" });
  try {
    const con = await instance.connect();
    const [[n]] = (await con.runAndReadAll("SELECT count(*)::INTEGER FROM main.t")).getRowsJS() as [[number]];
    con.closeSync();
    return n;
  } finally {
    instance.closeSync();
  }
}

describe("copyTable against a node that streams one batch of two rows", () => {
  for (const [announced, outcome] of [
    [2, "copies them"],
    [3, "fails when the end trailer announces three"],
  ] as const) {
    test(`it ${outcome}`, async () => {
      await using server = await startTestServer();
      await using dir = await tempDir();
      const nc = await connect({ servers: server.url });
      const path = join(dir.path, "copy.duckdb");
      const file = await createBackupFile(path);
      try {
        serveTwoRows(nc, "test.backup", announced);
        await nc.flush();
        await file.run(TABLE.ddl);
        const lines: string[] = [];
        const progress = new BackupProgress({ write: (text) => lines.push(text) > 0 }, 1);
        const copying = copyTable(nc, "test.backup", file, TABLE, {}, progress, {
          timeoutMs: 60_000,
          signal: new AbortController().signal,
        });
        if (announced === 2) {
          await copying;
          assert.match(lines.join(""), /\[1\/1\] main\.t: 2 rows/);
          await file.close();
          assert.equal(await countRows(path), 2);
        } else {
          await assert.rejects(
            copying,
            /main\.t: the node announced 3 rows and 2 arrived; the copy would differ/,
          );
          assert.deepEqual(lines, []);
        }
      } finally {
        await file[Symbol.asyncDispose]();
        await nc.close();
      }
    });
  }
});

describe("createViews", () => {
  const view = (name: string, select: string): PlannedView => ({
    schema: "main",
    name,
    ddl: `CREATE VIEW main.${name} AS ${select};`,
    comment: null,
    columnComments: [],
  });

  test("makes a view over a view that comes later in name order", async () => {
    await using dir = await tempDir();
    const file = await createBackupFile(join(dir.path, "views.duckdb"));
    try {
      await file.run(TABLE.ddl);
      await createViews(file, [
        view("a_over_b", "SELECT * FROM main.b_over_t"),
        view("b_over_t", "SELECT * FROM main.t"),
      ]);
      await file.run("SELECT * FROM main.a_over_b");
    } finally {
      await file[Symbol.asyncDispose]();
    }
  });

  test("throws naming each view it cannot make and DuckDB's reason", async () => {
    await using dir = await tempDir();
    const file = await createBackupFile(join(dir.path, "views.duckdb"));
    try {
      await file.run(TABLE.ddl);
      await assert.rejects(
        createViews(file, [
          view("fine", "SELECT * FROM main.t"),
          view("gone", "SELECT * FROM main.not_copied"),
          view("over_gone", "SELECT * FROM main.gone"),
        ]),
        (err: Error) =>
          /view main\.gone cannot be recreated: .*not_copied/.test(err.message) &&
          /view main\.over_gone cannot be recreated: .*gone/.test(err.message) &&
          !err.message.includes("main.fine"),
      );
    } finally {
      await file[Symbol.asyncDispose]();
    }
  });
});
