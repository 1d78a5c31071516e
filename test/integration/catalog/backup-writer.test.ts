import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import {
  Binary,
  Bool,
  Decimal,
  Field,
  Float64,
  Int32,
  List,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  Timestamp,
  TimeUnit,
  Uint64,
  Utf8,
  vectorFromArray,
  type Data,
} from "apache-arrow";
import { createBackupFile } from "../../../src/catalog/backup-writer.ts";
import { tempDir } from "../../harness/temp-dir.ts";

/** Three rows covering the edge values of every type the catalog's tables use, plus decimals and blobs. */
function edgeBatch(): RecordBatch {
  const n = 3;
  const ts = makeData({
    type: new Timestamp(TimeUnit.MICROSECOND, "UTC"),
    length: n,
    nullCount: 1,
    nullBitmap: new Uint8Array([0b101]),
    data: new BigInt64Array([1700000000123456n, 0n, -1n]),
  });
  const dec = makeData({
    type: new Decimal(3, 18, 128),
    length: n,
    nullCount: 0,
    data: new Uint32Array([~0, ~0, ~0, ~0, 12345, 0, 0, 0, 0, 1, 0, 0].map((w) => w >>> 0)),
  });
  const huge = makeData({
    type: new Decimal(0, 38, 128),
    length: n,
    nullCount: 0,
    data: new Uint32Array([0, 0, 0, 0x80000000, 1, 0, 0, 0, ~0 >>> 0, ~0 >>> 0, ~0 >>> 0, 0x7fffffff]),
  });
  const listType = new List(new Field("item", new Utf8(), true));
  const columns: [string, Data][] = [
    ["ts", ts],
    ["d", dec],
    ["h", huge],
    ["b", vectorFromArray([new Uint8Array([1, 2, 3]), null, new Uint8Array([])], new Binary()).data[0]!],
    ["l", vectorFromArray([["a", null, "ü€ a string longer than 12 bytes"], null, []], listType).data[0]!],
    ["s", vectorFromArray(["x", null, "ü€ a string longer than 12 bytes"], new Utf8()).data[0]!],
    ["i", vectorFromArray([1, null, -2147483648], new Int32()).data[0]!],
    ["ok", vectorFromArray([true, false, null], new Bool()).data[0]!],
    ["x", vectorFromArray([1.5, -0.25, null], new Float64()).data[0]!],
    ["u", vectorFromArray([18446744073709551615n, 0n, null], new Uint64()).data[0]!],
  ];
  const fields = columns.map(([name, data]) => new Field(name, data.type, true));
  return new RecordBatch(
    new Schema(fields),
    makeData({ type: new Struct(fields), length: n, nullCount: 0, children: columns.map(([, d]) => d) }),
  );
}

const EXPECTED = [
  [
    "2023-11-14 22:13:20.123456+00",
    "-0.001",
    "-170141183460469231731687303715884105728",
    "\\x01\\x02\\x03",
    ["a", null, "ü€ a string longer than 12 bytes"],
    "x",
    1,
    true,
    1.5,
    "18446744073709551615",
  ],
  [null, "12.345", "1", null, null, null, null, false, -0.25, "0"],
  [
    "1969-12-31 23:59:59.999999+00",
    "4294967.296",
    "170141183460469231731687303715884105727",
    "",
    [],
    "ü€ a string longer than 12 bytes",
    -2147483648,
    null,
    null,
    null,
  ],
];

test("Arrow batches, sliced or whole, append to DuckDB with every value exact: µs timestamps, decimals, hugeints, blobs, lists, NULLs", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "backup.duckdb");
  const file = await createBackupFile(path);
  await file.run(
    "CREATE SCHEMA hx; CREATE TABLE hx.t (ts TIMESTAMPTZ, d DECIMAL(18,3), h HUGEINT, b BLOB, l VARCHAR[], s VARCHAR, i INTEGER, ok BOOLEAN, x DOUBLE, u UBIGINT)",
  );
  const appender = await file.appendTo("hx", "t");
  const batch = edgeBatch();
  await appender.append(batch);
  await appender.append(batch.slice(1, 3));
  await appender.finish();
  await file.close();

  const instance = await DuckDBInstance.create(path);
  try {
    const con = await instance.connect();
    await con.run("SET TimeZone = 'UTC'");
    const rows = (
      await con.runAndReadAll("SELECT ts::VARCHAR, d::VARCHAR, h::VARCHAR, b, l, s, i, ok, x, u FROM hx.t")
    ).getRowsJson();
    assert.deepEqual(rows, [...EXPECTED, EXPECTED[1], EXPECTED[2]]);
    const types = (
      await con.runAndReadAll(
        "SELECT data_type FROM duckdb_columns() WHERE table_name = 't' ORDER BY column_index",
      )
    ).getRowsJS();
    assert.deepEqual(types.flat(), [
      "TIMESTAMP WITH TIME ZONE",
      "DECIMAL(18,3)",
      "HUGEINT",
      "BLOB",
      "VARCHAR[]",
      "VARCHAR",
      "INTEGER",
      "BOOLEAN",
      "DOUBLE",
      "UBIGINT",
    ]);
    con.closeSync();
  } finally {
    instance.closeSync();
  }
});

test("a batch whose columns are not the table's is refused with both lists named", async () => {
  await using dir = await tempDir();
  await using file = await createBackupFile(join(dir.path, "b.duckdb"));
  await file.run("CREATE TABLE t (a INTEGER, b INTEGER)");
  const appender = await file.appendTo("main", "t");
  const batch = new RecordBatch({
    a: vectorFromArray([1], new Int32()).data[0]!,
    c: vectorFromArray([2], new Int32()).data[0]!,
  });
  await assert.rejects(
    appender.append(batch),
    /main\.t: the stream's columns \(a, c\) are not the table's \(a, b\)/,
  );
  appender.abandon();
});

test("columns the stream carries as text (lists, structs as JSON; UHUGEINT, INTERVAL as text) are cast back by DuckDB exactly", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "text.duckdb");
  const file = await createBackupFile(path);
  await file.run(
    "CREATE SCHEMA hx; CREATE TABLE hx.t (n INTEGER, tags VARCHAR[], backoff BIGINT[], s STRUCT(a INTEGER, b DOUBLE[]), u UHUGEINT, d INTERVAL)",
  );
  const text = (values: (string | null)[]) => vectorFromArray(values, new Utf8()).data[0]!;
  const batch = new RecordBatch({
    n: vectorFromArray([1, 2], new Int32()).data[0]!,
    tags: text(['["a",null,"é\\"q"]', null]),
    backoff: text(['["9007199254740993",5,-9223372036854775808]', "[]"]),
    s: text(['{"a":1,"b":[1.5]}', null]),
    u: text(["340282366920938463463374607431768211455", null]),
    d: text(["1 day 02:03:04.000005", null]),
  });
  const appender = await file.appendTo("hx", "t");
  await appender.append(batch);
  await appender.finish();
  await file.close();

  const instance = await DuckDBInstance.create(path);
  try {
    const con = await instance.connect();
    const rows = (
      await con.runAndReadAll(
        "SELECT n, tags, backoff::VARCHAR[], s, u::VARCHAR, d::VARCHAR FROM hx.t ORDER BY n",
      )
    ).getRowsJson();
    assert.deepEqual(rows, [
      [
        1,
        ["a", null, 'é"q'],
        ["9007199254740993", "5", "-9223372036854775808"],
        { a: 1, b: [1.5] },
        "340282366920938463463374607431768211455",
        "1 day 02:03:04.000005",
      ],
      [2, null, [], null, null, null],
    ]);
    con.closeSync();
  } finally {
    instance.closeSync();
  }
});
