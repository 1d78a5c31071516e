import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { quietCause } from "../../../src/node/epoch-watch.ts";

describe("quietCause: why no epoch reaches a catalog", () => {
  test("no marker written since the last one it got: the scraper is quiet", () =>
    assert.equal(
      quietCause(40, 40, { lastCommitSeq: 40, deliveredSeq: 40, nextCommitSeq: 0 }),
      "no-commits",
    ));
  test("a fresh catalog on a stream nothing writes to: the scraper is quiet", () =>
    assert.equal(quietCause(0, 0, { lastCommitSeq: 0, deliveredSeq: 0, nextCommitSeq: 0 }), "no-commits"));
  test("the consumer handed out markers this catalog never got: another process pulls from it", () =>
    assert.equal(
      quietCause(40, 40, { lastCommitSeq: 52, deliveredSeq: 52, nextCommitSeq: 46 }),
      "taken-elsewhere",
    ));
  test("another process holds a marker this catalog never got while newer ones wait behind it: another process pulls from it", () =>
    assert.equal(
      quietCause(40, 40, { lastCommitSeq: 52, deliveredSeq: 46, nextCommitSeq: 46 }),
      "taken-elsewhere",
    ));
  test("markers its earlier run got, before this watch began, are no sign of anyone else", () =>
    assert.equal(quietCause(0, 40, { lastCommitSeq: 40, deliveredSeq: 40, nextCommitSeq: 0 }), "no-commits"));
  test("parts written since the last marker, which the consumer skips past: the scraper is quiet, not anyone else", () =>
    assert.equal(
      quietCause(18, 18, { lastCommitSeq: 18, deliveredSeq: 20, nextCommitSeq: 0 }),
      "no-commits",
    ));
  test("parts the consumer skipped past, then a marker it has not handed out: undelivered, not anyone else", () =>
    assert.equal(
      quietCause(18, 18, { lastCommitSeq: 24, deliveredSeq: 20, nextCommitSeq: 24 }),
      "undelivered",
    ));
  test("natsmon restarted its embedded sink since the last new marker: the restart, whatever the consumer shows", () =>
    assert.equal(
      quietCause(18, 18, { lastCommitSeq: 36, deliveredSeq: 36, nextCommitSeq: 24 }, true),
      "sink-restarted",
    ));
  test("a marker handed out before this run and never acked holds the others back: awaiting its redelivery", () =>
    assert.equal(
      quietCause(0, 40, { lastCommitSeq: 52, deliveredSeq: 40, nextCommitSeq: 46, ackPending: 1 }),
      "awaiting-redelivery",
    ));
  test("a marker this run was handed and has not acked is no earlier run's: undelivered", () =>
    assert.equal(
      quietCause(40, 40, { lastCommitSeq: 52, deliveredSeq: 40, nextCommitSeq: 46, ackPending: 1 }),
      "undelivered",
    ));
  test("markers wait in the stream and the consumer hands out none: undelivered", () =>
    assert.equal(
      quietCause(40, 40, { lastCommitSeq: 52, deliveredSeq: 40, nextCommitSeq: 46 }),
      "undelivered",
    ));
});
