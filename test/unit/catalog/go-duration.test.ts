import { test } from "node:test";
import assert from "node:assert/strict";
import { durationNs, parseGoDurationNs } from "../../../src/catalog/go-duration.ts";

test("Go duration strings as nats-server prints them are read to exact nanoseconds", () => {
  const cases: [string, bigint | undefined][] = [
    ["0s", 0n],
    ["0", 0n],
    ["612µs", 612_000n],
    ["717μs", 717_000n],
    ["5us", 5_000n],
    ["1.165715ms", 1_165_715n],
    ["4.709186ms", 4_709_186n],
    ["250ns", 250n],
    ["4s", 4_000_000_000n],
    ["1m19s", 79_000_000_000n],
    ["14m17s", 857_000_000_000n],
    ["2h3m0.5s", 7_380_500_000_000n],
    ["1.5h", 5_400_000_000_000n],
    ["0.000000001s", 1n],
    ["0.0000000019s", 1n],
    ["-1.5s", -1_500_000_000n],
    [".5s", 500_000_000n],
    ["", undefined],
    ["1", undefined],
    ["1d", undefined],
    ["ms", undefined],
    ["1m 2s", undefined],
    ["s1", undefined],
  ];
  for (const [text, expected] of cases) assert.equal(parseGoDurationNs(text), expected, text);
});

test("a duration field may already be nanoseconds; anything else is no duration", () => {
  assert.equal(durationNs("1m47s"), 107_000_000_000n);
  assert.equal(durationNs(1500), 1500);
  assert.equal(durationNs(12n), 12n);
  assert.equal(durationNs(undefined), undefined);
  assert.equal(durationNs({}), undefined);
});
