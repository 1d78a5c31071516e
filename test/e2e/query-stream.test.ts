import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import { StreamFailedError, readArrowStream } from "../../src/cli/index.ts";
import { systemSubjects } from "../../src/protocol/index.ts";
import { spawnNatsmon } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";

const subjects = systemSubjects("local");
const MIB = 1024 * 1024;

test("a node serves db.query.stream with the configured compression, refusing writes in-band", async () => {
  await using dir = await tempDir();
  await using node = spawnNatsmon(["run", "--data-dir", dir.path], {
    NATSMON_SINK_EMBEDDED_PORT: "-1",
    NATSMON_DB_QUERY_STREAM_COMPRESSION: "zstd",
    NATSMON_DB_QUERY_STREAM_WINDOW: "2",
  });
  const nc = await connect({ servers: await node.waitForUrl() });
  try {
    const reader = await readArrowStream(
      nc,
      subjects.dbQueryStream,
      { sql: "SELECT range AS i, 'row ' || range AS s FROM range($1::BIGINT)", params: [300_000] },
      { timeoutMs: 30_000 },
    );
    let rows = 0;
    let last = "";
    for await (const batch of reader) {
      rows += batch.numRows;
      last = String(batch.get(batch.numRows - 1)?.toJSON().s);
    }
    assert.equal(rows, 300_000);
    assert.equal(last, "row 299999");
    assert.equal(reader.totals?.rows, 300_000);
    // zstd shrinks this result well below its 5 MB or so of plain IPC.
    assert.ok((reader.totals?.bytes ?? Infinity) < 2_000_000, JSON.stringify(reader.totals));

    await assert.rejects(
      readArrowStream(nc, subjects.dbQueryStream, { sql: "CREATE TABLE x (i INT)" }, { timeoutMs: 10_000 }),
      (err: unknown) => err instanceof StreamFailedError && err.code === 400 && /CREATE/.test(err.message),
    );
  } finally {
    await nc.close();
  }
});

test("rows of about 2 kB stream in chunks near the 1 MiB target, the first batch too, though the bus takes 8 MiB", async () => {
  await using dir = await tempDir();
  await using node = spawnNatsmon(["run", "--data-dir", dir.path], { NATSMON_SINK_EMBEDDED_PORT: "-1" });
  const nc = await connect({ servers: await node.waitForUrl() });
  try {
    assert.ok((nc.info?.max_payload ?? 0) > 4 * MIB, "the embedded bus takes chunks far over the target");
    const sizes: number[] = [];
    let bytes = 0;
    const reader = await readArrowStream(
      nc,
      subjects.dbQueryStream,
      { sql: "SELECT range AS i, repeat('x', 2000) || range AS s FROM range(8000)" },
      {
        timeoutMs: 30_000,
        onProgress: (p) => {
          sizes.push(p.bytes - bytes);
          bytes = p.bytes;
        },
      },
    );
    let rows = 0;
    for await (const batch of reader) rows += batch.numRows;
    assert.equal(rows, 8000);
    const chunks = sizes.slice(1);
    assert.ok(chunks.length >= 10, `${chunks.length} chunks`);
    assert.ok(
      chunks.every((size) => size <= 2 * MIB),
      `chunk sizes ${chunks.map((b) => (b / MIB).toFixed(2)).join(", ")} MiB`,
    );
  } finally {
    await nc.close();
  }
});

test("db.query.stream answers with a 503 error trailer while the catalog will not open", async () => {
  await using dir = await tempDir();
  await writeFile(join(dir.path, "local.duckdb"), "this is not a DuckDB file, it is garbage".repeat(200));
  await using node = spawnNatsmon(["run", "--data-dir", dir.path], { NATSMON_SINK_EMBEDDED_PORT: "-1" });
  const nc = await connect({ servers: await node.waitForUrl() });
  try {
    await assert.rejects(
      readArrowStream(nc, subjects.dbQueryStream, { sql: "SELECT 1" }, { timeoutMs: 10_000 }),
      (err: unknown) => err instanceof StreamFailedError && err.code === 503 && /not open/.test(err.message),
    );
  } finally {
    await nc.close();
  }
});
