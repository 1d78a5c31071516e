import { test } from "node:test";
import assert from "node:assert/strict";
import { progressOn } from "../../../src/cli/query-output.ts";

/** A terminal (or not) that records what is written, and a clock the test moves. */
function given(isTTY: boolean) {
  const written: string[] = [];
  const clock = { ms: 1000 };
  const progress = progressOn({ isTTY, write: (text) => written.push(text) > 0 }, () => clock.ms);
  return { written, clock, progress };
}

test("on a terminal: quiet for half a second, then rows and bytes received, redrawn at most every 200 ms", () => {
  const { written, clock, progress } = given(true);
  progress.update(10, 2_000);
  clock.ms += 499;
  progress.update(20, 4_000);
  assert.deepEqual(written, [], "a result that comes at once shows no progress");

  clock.ms += 1;
  progress.update(1_234_567, 45_600_000);
  assert.deepEqual(written, ["\r\x1b[Knatsmon: 1,234,567 rows, 45.6 MB received…"]);

  clock.ms += 199;
  progress.update(1_300_000, 48_000_000);
  assert.equal(written.length, 1, "not redrawn within 200 ms");
  clock.ms += 1;
  progress.update(1_300_000, 48_000_000);
  assert.equal(written.at(-1), "\r\x1b[Knatsmon: 1,300,000 rows, 48.0 MB received…");

  progress.done();
  assert.equal(written.at(-1), "\r\x1b[K", "the line is cleared at the end");
});

test("on a terminal: a result done before anything was shown leaves nothing to clear", () => {
  const { written, progress } = given(true);
  progress.update(5, 100);
  progress.done();
  assert.deepEqual(written, []);
});

test("off a terminal (a pipe, a file): nothing is written", () => {
  const { written, clock, progress } = given(false);
  clock.ms += 10_000;
  progress.update(1_000_000, 1_000_000_000);
  progress.done();
  assert.deepEqual(written, []);
});
