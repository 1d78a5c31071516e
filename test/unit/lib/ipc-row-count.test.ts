import { test } from "node:test";
import assert from "node:assert/strict";
import { tableFromArrays } from "apache-arrow";
import { END_OF_STREAM, IpcMessageEncoder, ipcRowCount } from "../../../src/lib/index.ts";

const ROWS = 10_000;

/** A dictionary-encoded column, so each record batch message follows a dictionary batch. */
const table = tableFromArrays({
  id: Int32Array.from({ length: ROWS }, (_, i) => i),
  kind: Array.from({ length: ROWS }, (_, i) => `kind-${i % 4}`),
});

for (const compression of ["none", "lz4", "zstd"] as const) {
  test(`${compression}: a chunk's rows are read from its metadata, dictionary batches counting none`, () => {
    const encoder = new IpcMessageEncoder(table.schema, compression);
    const sizes = [1, 4096, 5903];
    let at = 0;
    for (const rows of sizes) {
      const chunk = encoder.encode(table.batches[0]!.slice(at, at + rows));
      at += rows;
      assert.equal(ipcRowCount(chunk), rows);
    }
    assert.equal(at, ROWS);
  });
}

test("the schema message and the end-of-stream marker hold no rows; messages back to back add up", () => {
  const encoder = new IpcMessageEncoder(table.schema, "none");
  assert.equal(ipcRowCount(encoder.schemaMessage), 0);
  assert.equal(ipcRowCount(END_OF_STREAM), 0);
  assert.equal(ipcRowCount(new Uint8Array(0)), 0);
  const first = encoder.encode(table.batches[0]!.slice(0, 300));
  const second = encoder.encode(table.batches[0]!.slice(300, 1000));
  const stream = new Uint8Array([...encoder.schemaMessage, ...first, ...second, ...END_OF_STREAM]);
  assert.equal(ipcRowCount(stream), 1000);
});
