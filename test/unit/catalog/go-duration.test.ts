import { test } from "node:test";
import assert from "node:assert/strict";
import { durationNs, parseGoDurationNs } from "../../../src/catalog/go-duration.ts";

test("Go duration strings as NATS prints them become integer nanoseconds", () => {
  const cases: [string, bigint][] = [
    ["0s", 0n],
    ["0", 0n],
    ["612\u00b5s", 612_000n],
    ["612\u03bcs", 612_000n],
    ["612us", 612_000n],
    ["1.165715ms", 1_165_715n],
    ["1.84169ms", 1_841_690n],
    ["15m30s", 930_000_000_000n],
    ["1m47s", 107_000_000_000n],
    ["2h3m4.5s", 7_384_500_000_000n],
    ["250ns", 250n],
    ["1.5h", 5_400_000_000_000n],
    ["-1m", -60_000_000_000n],
    [".5s", 500_000_000n],
    // Go truncates below a nanosecond.
    ["1.0000009\u00b5s", 1_000n],
  ];
  for (const [text, ns] of cases) assert.equal(parseGoDurationNs(text), ns, text);
});

test("text that is not a Go duration gives undefined, never a wrong number", () => {
  for (const text of ["", "-", "5", "1x", "ms", "1m 2s", "1.s.", "s1", "1ms2"]) {
    assert.equal(parseGoDurationNs(text), undefined, JSON.stringify(text));
  }
  assert.equal(durationNs(undefined), undefined);
  assert.equal(durationNs(1000), undefined);
  assert.equal(durationNs("1s"), 1_000_000_000n);
});
