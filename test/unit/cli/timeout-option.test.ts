import { test } from "node:test";
import assert from "node:assert/strict";
import { InvalidArgumentError } from "commander";
import { parseTimeoutMs, timeoutOption } from "../../../src/cli/timeout-option.ts";

test("--timeout: a positive whole number of milliseconds is taken as a number", () => {
  for (const [given, ms] of [
    ["1", 1],
    ["60000", 60_000],
    ["2147483647", 2 ** 31 - 1],
    ["1e3", 1000],
    [" 250 ", 250],
  ] as const) {
    assert.equal(parseTimeoutMs(given), ms, given);
  }
});

test("--timeout: anything else is commander's invalid argument, saying what is expected", () => {
  for (const given of [
    "",
    " ",
    "abc",
    "0",
    "-5",
    "2.5",
    "NaN",
    "Infinity",
    "1e400",
    "9007199254740992",
    "2147483648",
    "10s",
  ]) {
    assert.throws(
      () => parseTimeoutMs(given),
      (err: unknown) =>
        err instanceof InvalidArgumentError &&
        err.message === "expected a positive whole number of milliseconds up to 2147483647, such as 60000.",
      JSON.stringify(given),
    );
  }
});

test("--timeout defaults to a minute", () => {
  const option = timeoutOption("how long to wait");
  assert.equal(option.flags, "--timeout <ms>");
  assert.equal(option.defaultValue, 60_000);
});
