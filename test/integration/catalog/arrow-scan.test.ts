import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { tableFromIPC } from "apache-arrow";
import { openArrowScan, scanToIpc } from "../../../src/catalog/index.ts";
import { BadRequestError } from "../../../src/domain/index.ts";
import { registerArrowCodecs } from "../../../src/lib/index.ts";
import { tempCatalog } from "./lab-epoch.ts";

describe("Arrow scans of a real catalog file", () => {
  let t: Awaited<ReturnType<typeof tempCatalog>>;

  before(async () => {
    t = await tempCatalog();
    registerArrowCodecs();
  });

  after(async () => {
    await t?.[Symbol.asyncDispose]();
  });

  test("scanToIpc encodes a result as one Arrow IPC stream in every compression", async () => {
    const sql = "SELECT range AS i, 'text ' || range AS s, range % 2 = 0 AS even FROM range(100000)";
    for (const compression of ["none", "lz4", "zstd"] as const) {
      const result = await scanToIpc(t.catalog, { sql }, { compression, batchRows: 30_000 });
      assert.equal(result.rows, 100_000);
      assert.equal(result.batches, 4);
      assert.equal(result.ipc?.byteLength, result.bytes);
      const table = tableFromIPC(result.ipc);
      assert.equal(table.numRows, 100_000);
      assert.deepEqual(table.get(99_999)?.toJSON(), { i: 99_999n, s: "text 99999", even: false });
    }
  });

  test("trusted SQL skips the read-only guard, and the backup pool is apart from the query readers", async () => {
    const sql = "SELECT * FROM query('SELECT 42 AS v')";
    await assert.rejects(
      openArrowScan(t.catalog, { sql }, { pool: "query", stepTimeoutMs: 5_000 }),
      BadRequestError,
    );
    const scan = await openArrowScan(
      t.catalog,
      { sql },
      { pool: "backup", trusted: true, stepTimeoutMs: 5_000 },
    );
    assert.deepEqual(t.catalog.pools(), {
      readers: { size: 2, busy: 0, waiting: 0 },
      backup: { size: 1, busy: 1, waiting: 0 },
    });
    const batch = await scan.next(10);
    assert.equal(batch?.get(0)?.toJSON().v, 42);
    assert.equal(await scan.next(10), undefined);
    await scan.close();
    assert.equal(t.catalog.pools().backup.busy, 0);
  });

  test("an aborted scan stops its query, opening or reading, and gives the connection back usable", async () => {
    // A blocking aggregate runs while the scan opens: the abort interrupts it.
    const opening = new AbortController();
    const open = openArrowScan(
      t.catalog,
      { sql: "SELECT count(*) FROM range(10000000000) a, range(1000) b" },
      { pool: "query", signal: opening.signal, stepTimeoutMs: 60_000 },
    );
    setTimeout(() => opening.abort(new Error("client gone while opening")), 100);
    await assert.rejects(open, /client gone while opening/);
    assert.equal(t.catalog.pools().readers.busy, 0);

    // Aborted between batches, the scan reads no further.
    const reading = new AbortController();
    const scan = await openArrowScan(
      t.catalog,
      { sql: "SELECT range FROM range(10000000)" },
      { pool: "query", signal: reading.signal, stepTimeoutMs: 60_000 },
    );
    assert.equal((await scan.next(10))?.numRows, 10);
    reading.abort(new Error("client gone while reading"));
    await assert.rejects(scan.next(10), /client gone while reading/);
    await scan.close();
    assert.equal(t.catalog.pools().readers.busy, 0);
    const again = await scanToIpc(t.catalog, { sql: "SELECT 1 AS one" }, { compression: "none" });
    assert.equal(again.rows, 1);
  });
});
