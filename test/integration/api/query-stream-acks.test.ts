/**
 * Acks that do not acknowledge: a client acking chunks it was never sent, or repeating
 * stale, duplicate and malformed acks, gets neither more than `window` chunks in flight
 * nor a scan held past the ack timeout.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { pino } from "pino";
import type { Msg } from "@nats-io/nats-core";
import { ServiceErrorHeader, StreamHeader } from "../../../src/protocol/index.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { STREAM_DB, openRawStream, startStreamFixture, type StreamFixture } from "./stream-fixture.ts";

/** About 50 chunks of 1 MiB: far more than the few each test lets through. */
const MANY = "SELECT range AS i, repeat('y', 200) AS s FROM range(200000)";

const kindsAndSeqs = (received: readonly Msg[]) =>
  received.map((m) =>
    m.headers?.get(StreamHeader.Kind) === "error"
      ? ["error", m.headers.get(ServiceErrorHeader.Code)]
      : [m.headers?.get(StreamHeader.Kind), m.headers?.get(StreamHeader.Seq)],
  );

/** The trailer of a stream stopped for want of acks. */
const GONE = ["error", "408"];

const chunks = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => ["chunk", String(from + i)]);

describe("db.query.stream acks that make no progress", () => {
  let f: StreamFixture;
  type LogLine = { msg?: string; [key: string]: unknown };
  const logs: LogLine[] = [];
  const warnings = (pattern: RegExp) => logs.filter((l) => pattern.test(l.msg ?? ""));

  before(async () => {
    const log = pino({ level: "warn" }, { write: (line: string) => logs.push(JSON.parse(line) as LogLine) });
    f = await startStreamFixture(
      { ...STREAM_DB, queryStream: { maxRows: 0, window: 4, compression: "none", ackTimeoutMs: 1_000 } },
      { log },
    );
  });

  after(async () => {
    await f?.[Symbol.asyncDispose]();
  });

  test("an ack far ahead covers only the chunks sent so far: the window still holds and the client is gone after the ack timeout", async () => {
    const before = f.outcomes.length;
    const raw = openRawStream(f.nc, f.subjects.dbQueryStream, { sql: MANY, window: 3 });
    await raw.message(3);
    // Chunks 1–3 sent: this ack can cover no more, so chunks 4–6 follow and the window is full.
    raw.ack(1_000_000_000);
    await raw.message(6);
    raw.ack(1_000_000_000);
    await raw.message(9);
    const outcome = await waitFor(() => f.outcomes[before], { message: "the stream to give up" });
    assert.equal(outcome.status, "gone", JSON.stringify(outcome));
    assert.equal(outcome.status === "gone" && outcome.chunks, 9);
    assert.equal(f.catalog.pools().readers.busy, 0);
    // Everything the server sent has arrived by now: 3 chunks past the 6 the acks covered, then the 408 trailer.
    await f.flush();
    assert.deepEqual(kindsAndSeqs(raw.received), [...chunks(1, 9), GONE]);
    raw.close();
    // Acking ahead is logged once per stream; the stream counts only what it sent as acked.
    assert.deepEqual(
      warnings(/not yet sent/).map((l) => [l.ack_seq, l.sent]),
      [[1_000_000_000, 3]],
    );
    assert.equal(warnings(/stopped acknowledging/).at(-1)?.acked, 6);
  });

  test("stale, duplicate and malformed acks do not hold the scan: the client is gone after the ack timeout", async () => {
    const before = f.outcomes.length;
    const gone = warnings(/stopped acknowledging/).length;
    const raw = openRawStream(f.nc, f.subjects.dbQueryStream, { sql: MANY, window: 3 });
    await raw.message(3);
    raw.ack(2);
    await raw.message(5);
    // From here the client keeps sending to the ack subject, faster than the ack timeout,
    // but never acknowledges past chunk 2.
    const noise = [
      JSON.stringify({ seq: 1 }),
      JSON.stringify({ seq: 2 }),
      JSON.stringify({ seq: "3" }),
      JSON.stringify({ seq: 3.5 }),
      JSON.stringify({ seq: -1 }),
      JSON.stringify({ cancel: false }),
      "{}",
      "not json",
    ];
    let sent = 0;
    const chatter = setInterval(() => raw.ackBody(noise[sent++ % noise.length]!), 50);
    try {
      const outcome = await waitFor(() => f.outcomes[before], { message: "the stream to give up" });
      assert.equal(outcome.status, "gone", JSON.stringify(outcome));
      assert.equal(outcome.status === "gone" && outcome.chunks, 5);
    } finally {
      clearInterval(chatter);
    }
    assert.equal(f.catalog.pools().readers.busy, 0);
    await f.flush();
    assert.deepEqual(kindsAndSeqs(raw.received), [...chunks(1, 5), GONE]);
    raw.close();
    const warned = warnings(/stopped acknowledging/).slice(gone);
    assert.deepEqual(
      warned.map((l) => [l.sent, l.acked]),
      [[5, 2]],
    );
  });
});
