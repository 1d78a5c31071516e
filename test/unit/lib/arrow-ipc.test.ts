import { test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { Binary, Table, Utf8, tableFromArrays, tableFromIPC, vectorFromArray } from "apache-arrow";
import { END_OF_STREAM, IpcMessageEncoder } from "../../../src/lib/index.ts";
import { assertLengthPrefixes } from "../../harness/ipc-body-buffers.ts";

const ROWS = 20_000;

/**
 * Compressible columns, with nulls and without (an empty validity buffer), plain strings as
 * natsmon's scans make them, a dictionary-encoded one (a dictionary batch precedes each
 * record batch), and random bytes that do not compress.
 */
function sample(): Table {
  const table = tableFromArrays({
    id: Int32Array.from({ length: ROWS }, (_, i) => i),
    ratio: Float64Array.from({ length: ROWS }, (_, i) => i / 7),
    kind: Array.from({ length: ROWS }, (_, i) => `kind-${i % 4}`),
  });
  const name = vectorFromArray(
    Array.from({ length: ROWS }, (_, i) => (i % 5 === 0 ? null : `server-${i % 300}.example.net`)),
    new Utf8(),
  );
  const noise = vectorFromArray(
    Array.from({ length: ROWS }, () => new Uint8Array(randomBytes(24))),
    new Binary(),
  );
  return table.assign(new Table({ name, noise }));
}

for (const compression of ["lz4", "zstd"] as const) {
  test(`${compression}: each compressed body buffer starts with its uncompressed length, as the Arrow format requires`, () => {
    const table = sample();
    const encoder = new IpcMessageEncoder(table.schema, compression);
    const messages = table.batches.flatMap((batch) => {
      const parts: Uint8Array[] = [];
      for (let at = 0; at < batch.numRows; at += 4096) parts.push(encoder.encode(batch.slice(at, at + 4096)));
      return parts;
    });
    const { compressed, stored } = assertLengthPrefixes(messages, compression);
    assert.ok(compressed > 0, "some buffers compressed");
    assert.ok(stored > 0, "random bytes are stored uncompressed, prefix -1");
    // And the stream reads back value for value.
    const back = tableFromIPC([encoder.schemaMessage, ...messages, END_OF_STREAM]);
    assert.equal(back.numRows, ROWS);
    for (const i of [0, 1, 5, 4097, ROWS - 1]) {
      assert.deepEqual(back.get(i)?.toJSON(), table.get(i)?.toJSON(), `row ${i}`);
    }
  });
}

test("none: the batches read back as they were", () => {
  const table = sample();
  const encoder = new IpcMessageEncoder(table.schema, "none");
  const messages = table.batches.map((batch) => encoder.encode(batch));
  const back = tableFromIPC([encoder.schemaMessage, ...messages, END_OF_STREAM]);
  assert.equal(back.numRows, ROWS);
  assert.deepEqual(back.get(ROWS - 1)?.toJSON(), table.get(ROWS - 1)?.toJSON());
});
