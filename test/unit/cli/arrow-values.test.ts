import { test } from "node:test";
import assert from "node:assert/strict";
import {
  Binary,
  Bool,
  DateDay,
  Decimal,
  Field,
  Float64,
  Int32,
  Int64,
  List,
  type RecordBatch,
  Struct,
  Table,
  TimeMicrosecond,
  Timestamp,
  TimeUnit,
  Utf8,
  makeData,
  makeVector,
  tableFromIPC,
  tableToIPC,
  vectorFromArray,
  type Data,
  type DataType,
} from "apache-arrow";
import { batchRows, decimalText, timestamp, type Cell } from "../../../src/cli/arrow-values.ts";

/** 128-bit two's complement words (little-endian u32) of each value, for a Decimal column. */
function decimalWords(values: readonly bigint[]): Uint32Array {
  const words = new Uint32Array(values.length * 4);
  values.forEach((v, i) => {
    let u = BigInt.asUintN(128, v);
    for (let w = 0; w < 4; w++) {
      words[i * 4 + w] = Number(u & 0xffffffffn);
      u >>= 32n;
    }
  });
  return words;
}

/** A validity bitmap: bit i set when row i holds a value. */
function validity(valid: readonly boolean[]): Uint8Array {
  const bits = new Uint8Array(Math.ceil(valid.length / 8));
  valid.forEach((v, i) => v && (bits[i >> 3]! |= 1 << (i & 7)));
  return bits;
}

function fixed<T extends DataType>(type: T, data: ArrayLike<unknown>, valid: readonly boolean[]): Data<T> {
  const props = {
    type,
    length: valid.length,
    nullCount: valid.filter((v) => !v).length,
    nullBitmap: validity(valid),
    data,
  };
  return makeData(props as never) as Data<T>;
}

/** Passes a table through Arrow IPC bytes, as the stream delivers it. */
function roundTrip(table: Table): RecordBatch {
  const batches = tableFromIPC(tableToIPC(table, "stream")).batches;
  assert.equal(batches.length, 1);
  return batches[0]!;
}

test("the stream's rendering rules: RFC 3339 timestamps, null, base64 blobs, decimal strings, exact bigints", () => {
  const valid = [true, true, false];
  const table = new Table({
    int: makeVector(fixed(new Int32(), new Int32Array([1, -2, 0]), valid)),
    big: makeVector(fixed(new Int64(), new BigInt64Array([2n ** 53n + 1n, -42n, 0n]), valid)),
    dbl: makeVector(fixed(new Float64(), new Float64Array([1.5, Number.NaN, 0]), valid)),
    text: vectorFromArray(['a,"b"', "", null], new Utf8()),
    blob: vectorFromArray([new Uint8Array([0, 1, 254, 255]), new Uint8Array(0), null], new Binary()),
    flag: vectorFromArray([true, false, null], new Bool()),
    ts: makeVector(
      fixed(
        new Timestamp(TimeUnit.MICROSECOND),
        new BigInt64Array([1_763_812_934_123_456n, 1_763_812_934_000_000n, 0n]),
        valid,
      ),
    ),
    tstz: makeVector(
      fixed(
        new Timestamp(TimeUnit.MICROSECOND, "UTC"),
        new BigInt64Array([1_763_812_934_120_000n, 2n ** 63n - 1n, 0n]),
        valid,
      ),
    ),
    dec: makeVector(fixed(new Decimal(3, 18, 128), decimalWords([12_340n, -500n, 0n]), valid)),
    huge: makeVector(
      fixed(new Decimal(0, 38, 128), decimalWords([2n ** 127n - 1n, -(2n ** 127n), 0n]), valid),
    ),
    day: makeVector(fixed(new DateDay(), new Int32Array([20_414, -1, 0]), valid)),
    time: makeVector(fixed(new TimeMicrosecond(), new BigInt64Array([45_296_000_001n, 0n, 0n]), valid)),
  });
  const rows = batchRows(roundTrip(table));
  const expected: Cell[][] = [
    [
      1,
      "9007199254740993",
      1.5,
      'a,"b"',
      "AAH+/w==",
      true,
      "2025-11-22T12:02:14.123456Z",
      "2025-11-22T12:02:14.120Z",
      "12.340",
      "170141183460469231731687303715884105727",
      "2025-11-22",
      "12:34:56.000001",
    ],
    [
      -2,
      -42,
      "NaN",
      "",
      "",
      false,
      "2025-11-22T12:02:14.000Z",
      "infinity",
      "-0.500",
      "-170141183460469231731687303715884105728",
      "1969-12-31",
      "00:00:00",
    ],
    Array<Cell>(12).fill(null),
  ];
  assert.deepEqual(rows, expected);
});

test("lists and structs become arrays and objects; sliced batches read their own rows", () => {
  const list = vectorFromArray([[1, 2], [], [3]], new List(new Field("item", new Int32())));
  const struct = vectorFromArray(
    [
      { a: 1, b: "x" },
      { a: 2, b: null },
      { a: 3, b: "z" },
    ],
    new Struct([new Field("a", new Int32()), new Field("b", new Utf8(), true)]),
  );
  const batch = new Table({ list, struct }).batches[0]!;
  assert.deepEqual(batchRows(batch), [
    [[1, 2], { a: 1, b: "x" }],
    [[], { a: 2, b: null }],
    [[3], { a: 3, b: "z" }],
  ]);
  assert.deepEqual(batchRows(batch.slice(1, 3)), [
    [[], { a: 2, b: null }],
    [[3], { a: 3, b: "z" }],
  ]);
  const nullable = new Table({
    n: makeVector(fixed(new Int64(), new BigInt64Array([1n, 2n, 3n, 4n]), [true, false, true, false])),
    s: vectorFromArray(["a", null, "ccc", "dd"], new Utf8()),
  }).batches[0]!;
  assert.deepEqual(batchRows(nullable.slice(1, 4)), [
    [null, null],
    [3, "ccc"],
    [null, "dd"],
  ]);
});

test("decimal text keeps every digit of the scale and the sign", () => {
  const cases: [bigint, number, string][] = [
    [0n, 0, "0"],
    [5n, 3, "0.005"],
    [-5n, 3, "-0.005"],
    [123_456n, 2, "1234.56"],
    [-100n, 2, "-1.00"],
    [10n ** 37n, 0, "10000000000000000000000000000000000000"],
  ];
  for (const [unscaled, scale, text] of cases) assert.equal(decimalText(unscaled, scale), text);
});

test("timestamps keep their precision in every unit and mark infinity", () => {
  const cases: [bigint, bigint, string][] = [
    [0n, 1_000n, "1970-01-01T00:00:00.000Z"],
    [-1n, 1_000n, "1969-12-31T23:59:59.999999Z"],
    [1_500_000_000n, 1_000_000_000n, "2017-07-14T02:40:00.000Z"],
    [1_500_000_000_001n, 1_000_000n, "2017-07-14T02:40:00.001Z"],
    [1_500_000_000_000_000_007n, 1n, "2017-07-14T02:40:00.000000007Z"],
    [253_402_300_800_000_000n, 1_000n, "+010000-01-01T00:00:00.000Z"],
    [-9_000_000_000_000_000_000n, 1_000n, "-283229-05-10T08:00:00.000Z"],
    [2n ** 63n - 1n, 1_000n, "infinity"],
    [-(2n ** 63n) + 1n, 1_000n, "-infinity"],
  ];
  for (const [raw, nanosPerUnit, text] of cases)
    assert.equal(timestamp(raw, nanosPerUnit), text, String(raw));
});

test("a batch with no rows reads as none", () => {
  const batch = new Table({ a: vectorFromArray([1, 2], new Int32()) }).batches[0]!;
  assert.deepEqual(batchRows(batch.slice(2, 2)), []);
});
