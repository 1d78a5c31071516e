/**
 * The checks' helper macros on a real catalog: checks.go_duration_ns reads a duration as
 * Go's time.ParseDuration does (natscli writes io.nats.monitor.* durations with Go), and
 * checks.stream_label / checks.consumer_label name a stream or consumer with its domain.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { catalogWith } from "./check-harness.ts";

/** Text → nanoseconds, or null where Go's time.ParseDuration returns an error. */
const CASES: readonly (readonly [string, number | null])[] = [
  ["1h30m", 5_400_000_000_000],
  ["300ms", 300_000_000],
  ["1.5h", 5_400_000_000_000],
  [".5s", 500_000_000],
  ["1.s", 1_000_000_000],
  ["2µs", 2_000],
  ["2us", 2_000],
  ["10ns", 10],
  ["1h2m3s4ms", 3_723_004_000_000],
  ["+5s", 5_000_000_000],
  ["-5s", -5_000_000_000],
  ["0", 0],
  ["+0", 0],
  ["-0", 0],
  ["5", null],
  ["", null],
  [".s", null],
  ["1h-5m", null],
  ["+-5s", null],
  ["1d", null],
  ["5 s", null],
  ["abc", null],
  // Past BIGINT's nanoseconds (Go refuses the first, takes the second): NULL, not an error.
  ["100000000000h", null],
  ["9223372036854775807ns", null],
];

test("checks.go_duration_ns parses what Go's time.ParseDuration parses, and nothing else", async () => {
  await using fixture = await catalogWith([]);
  const values = CASES.map((_, i) => `($${i + 1}::VARCHAR, ${i})`).join(", ");
  const rows = await fixture.catalog.withReader(async (con) =>
    (
      await con.runAndReadAll(
        `SELECT text, checks.go_duration_ns(text) AS ns FROM (VALUES ${values}) v(text, i) ORDER BY i`,
        CASES.map(([text]) => text),
      )
    ).getRowObjectsJS(),
  );
  assert.deepEqual(
    rows.map((r) => [r.text, r.ns === null ? null : Number(r.ns)]),
    CASES.map(([text, ns]) => [text, ns]),
  );
});

test("checks.stream_label and checks.consumer_label put the JetStream domain first, and leave out a NULL or empty one", async () => {
  await using fixture = await catalogWith([]);
  const rows = await fixture.catalog.withReader(async (con) =>
    (
      await con.runAndReadAll(
        `SELECT checks.stream_label(d, 'APP', 'ORDERS') AS stream,
                checks.consumer_label(d, 'APP', 'ORDERS', 'proc') AS consumer
         FROM (VALUES ('hub', 0), ('', 1), (NULL, 2)) v(d, i) ORDER BY i`,
      )
    ).getRowObjectsJS(),
  );
  assert.deepEqual(rows, [
    { stream: "hub/APP/ORDERS", consumer: "hub/APP/ORDERS/proc" },
    { stream: "APP/ORDERS", consumer: "APP/ORDERS/proc" },
    { stream: "APP/ORDERS", consumer: "APP/ORDERS/proc" },
  ]);
});
