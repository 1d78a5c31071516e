import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import type { NatsConnection } from "@nats-io/nats-core";
import { StreamFailedError, readArrowStream } from "../../../src/cli/index.ts";
import { ServiceErrorHeader, StreamHeader, type StreamErrorTrailer } from "../../../src/protocol/index.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { STREAM_DB, openRawStream, startStreamFixture, type StreamFixture } from "./stream-fixture.ts";

/** Many chunks (about 100 bytes a row), however slowly they are read. */
const LONG = "SELECT range AS i, repeat('x', 100) || range AS s FROM range(3000000)";

/** db.query over the bus still answers: a read connection is free. */
async function queryAnswers(nc: NatsConnection, subject: string): Promise<void> {
  const reply = await nc.request(subject, JSON.stringify({ sql: "SELECT 42 AS answer" }), {
    timeout: 10_000,
  });
  assert.equal(reply.headers?.get(ServiceErrorHeader.Code) || undefined, undefined, reply.string());
  assert.deepEqual(reply.json(), [{ answer: 42 }]);
}

/** Reads `sql`'s stream to the end with natsmon's reader: its rows and end trailer. */
async function readAll(f: StreamFixture, sql: string) {
  const reader = await readArrowStream(f.nc, f.subjects.dbQueryStream, { sql }, { timeoutMs: 10_000 });
  let rows = 0;
  for await (const batch of reader) rows += batch.numRows;
  return { rows, totals: reader.totals };
}

describe("db.query.stream flow control and limits", () => {
  let f: StreamFixture;

  before(async () => {
    f = await startStreamFixture({
      ...STREAM_DB,
      queryStream: { maxRows: 1_000_000, window: 4, compression: "none", ackTimeoutMs: 1_000 },
    });
  });

  after(async () => {
    await f?.[Symbol.asyncDispose]();
  });

  test("a client that never acks gets exactly `window` chunks; the scan stops and frees its connection", async () => {
    const before = f.outcomes.length;
    const raw = openRawStream(f.nc, f.subjects.dbQueryStream, { sql: LONG, window: 3 });
    await raw.message(3);
    // Chunk 1 names the window the server keeps to: the request's, under the configured 4.
    assert.equal(raw.received[0]!.headers?.get(StreamHeader.Window), "3");
    // While the stream waits for an ack it holds one read connection; db.query still answers.
    assert.equal(f.catalog.pools().readers.busy, 1);
    await queryAnswers(f.nc, f.subjects.dbQuery);
    const outcome = await waitFor(() => f.outcomes[before], { message: "the stream to give up" });
    assert.equal(outcome.status, "gone");
    assert.equal(outcome.status === "gone" && outcome.chunks, 3);
    assert.equal(f.catalog.pools().readers.busy, 0);
    // Everything the server sent has arrived by now: 3 chunks, then the 408 trailer.
    await f.flush();
    assert.deepEqual(
      raw.received.map((m) => [m.headers?.get(StreamHeader.Kind), m.headers?.get(StreamHeader.Seq)]),
      [
        ["chunk", "1"],
        ["chunk", "2"],
        ["chunk", "3"],
        ["error", ""],
      ],
    );
    assert.equal(raw.received[3]!.headers?.get(ServiceErrorHeader.Code), "408");
    raw.close();
    await queryAnswers(f.nc, f.subjects.dbQuery);
  });

  test("a window larger than db.query-stream.window is capped, and no chunk ever runs ahead of it", async () => {
    const before = f.outcomes.length;
    const raw = openRawStream(f.nc, f.subjects.dbQueryStream, {
      sql: "SELECT range AS i, repeat('y', 200) AS s FROM range(60000)",
      window: 100,
    });
    assert.equal((await raw.message(1)).headers?.get(StreamHeader.Window), "4");
    let acked = 0;
    let maxAhead = 0;
    for (let n = 1; ; n++) {
      const msg = await raw.message(n);
      if (msg.headers?.get(StreamHeader.Kind) !== "chunk") break;
      // Chunk n can only have been sent after an ack of n - window.
      maxAhead = Math.max(maxAhead, n - acked);
      // Ack only every fourth chunk, so the window really fills up.
      if (n % 4 === 0) {
        raw.ack(n);
        acked = n;
      }
    }
    raw.close();
    const outcome = await waitFor(() => f.outcomes[before]);
    assert.equal(outcome.status, "end");
    assert.ok(outcome.status === "end" && outcome.chunks > 8, JSON.stringify(outcome));
    assert.equal(maxAhead, 4);
  });

  test("the reader acks every half window, and the stream still runs through", async () => {
    // Acks go to the system's db.stream-ack subjects.
    const acks: number[] = [];
    const spy = f.nc.subscribe(f.subjects.dbStreamAckAll, {
      callback: (_err, msg) => {
        const body = msg.json<{ seq?: unknown }>();
        if (typeof body.seq === "number") acks.push(body.seq);
      },
    });
    const { rows, totals } = await readAll(f, "SELECT range AS i, repeat('y', 200) AS s FROM range(60000)");
    await f.flush();
    spy.unsubscribe();
    assert.equal(rows, 60_000);
    const chunks = totals?.chunks ?? 0;
    assert.ok(chunks > 8, `${chunks} chunks`);
    // Window 4: the schema chunk, then every second chunk.
    const expected = [1];
    for (let seq = 3; seq <= chunks; seq += 2) expected.push(seq);
    assert.deepEqual(acks, expected);
  });

  test("a reader that pauses past the ack timeout and reads on gets the chunks it had, then a 408 naming the setting", async () => {
    const before = f.outcomes.length;
    const reader = await readArrowStream(
      f.nc,
      f.subjects.dbQueryStream,
      { sql: LONG },
      { timeoutMs: 30_000 },
    );
    const batches = reader[Symbol.asyncIterator]();
    assert.equal((await batches.next()).done, false);
    // The reader pauses: the server fills the window, waits out the ack timeout, gives up.
    const outcome = await waitFor(() => f.outcomes[before], { message: "the stream to give up" });
    assert.equal(outcome.status, "gone");
    let read = 1;
    await assert.rejects(
      async () => {
        while (!(await batches.next()).done) read++;
      },
      (err: unknown) =>
        err instanceof StreamFailedError &&
        err.code === 408 &&
        /db\.query-stream\.ack-timeout \(1000 ms\)/.test(err.message) &&
        /read the stream faster .*or raise db\.query-stream\.ack-timeout/.test(err.message),
    );
    // Every chunk sent before the server gave up was read first: the schema and `read` batches.
    assert.equal(outcome.status === "gone" && outcome.chunks, read + 1);
    assert.equal(f.catalog.pools().readers.busy, 0);
  });

  test("a client that unsubscribes mid-stream is taken as gone within the ack timeout", async () => {
    const before = f.outcomes.length;
    const raw = openRawStream(f.nc, f.subjects.dbQueryStream, { sql: LONG });
    await raw.message(2);
    raw.ack(2);
    raw.close();
    const outcome = await waitFor(() => f.outcomes[before]);
    assert.equal(outcome.status, "gone");
    assert.equal(f.catalog.pools().readers.busy, 0);
    await queryAnswers(f.nc, f.subjects.dbQuery);
  });

  test("cancel stops the stream at once: no trailer, connection free", async () => {
    const before = f.outcomes.length;
    const raw = openRawStream(f.nc, f.subjects.dbQueryStream, { sql: LONG });
    await raw.message(2);
    raw.cancel();
    const outcome = await waitFor(() => f.outcomes[before]);
    assert.equal(outcome.status, "cancelled");
    assert.equal(f.catalog.pools().readers.busy, 0);
    await f.flush();
    assert.ok(raw.received.every((m) => m.headers?.get(StreamHeader.Kind) === "chunk"));
    raw.close();

    // Breaking out of the reader's loop cancels the same way.
    const reader = await readArrowStream(
      f.nc,
      f.subjects.dbQueryStream,
      { sql: LONG },
      { timeoutMs: 10_000 },
    );
    let batches = 0;
    for await (const _ of reader) if (++batches === 2) break;
    const second = await waitFor(() => f.outcomes[before + 1]);
    assert.equal(second.status, "cancelled");
    assert.equal(f.catalog.pools().readers.busy, 0);
  });

  test("passing db.query-stream.max-rows ends the stream with a 413 error trailer", async () => {
    assert.equal((await readAll(f, "SELECT * FROM range(1000000)")).rows, 1_000_000);

    const over = await readArrowStream(
      f.nc,
      f.subjects.dbQueryStream,
      { sql: "SELECT * FROM range(1000001)" },
      { timeoutMs: 10_000 },
    );
    await assert.rejects(
      async () => {
        for await (const _ of over);
      },
      (err: unknown) =>
        err instanceof StreamFailedError &&
        err.code === 413 &&
        /db\.query-stream\.max-rows/.test(err.message),
    );
    // The trailer goes out first, then the scan gives its connection back.
    await waitFor(() => f.catalog.pools().readers.busy === 0);
  });

  test("a query failing mid-scan ends with a 400 error trailer that a plain request reads as a service error", async () => {
    const sql =
      "SELECT CASE WHEN range = 150000 THEN error('boom at 150000') ELSE range END AS v FROM range(200000)";
    const raw = openRawStream(f.nc, f.subjects.dbQueryStream, { sql, window: 1000 });
    let last;
    for (let n = 1; ; n++) {
      last = await raw.message(n);
      if (last.headers?.get(StreamHeader.Kind) !== "chunk") break;
      raw.ack(n);
    }
    raw.close();
    assert.equal(last.headers?.get(StreamHeader.Kind), "error");
    assert.equal(last.headers?.get(ServiceErrorHeader.Code), "400");
    // DuckDB reports no cause for a failure mid-stream; the result is never passed off as complete.
    assert.match(
      last.headers?.get(ServiceErrorHeader.Description) ?? "",
      /failed while its result was being read/,
    );
    const trailer = last.json<StreamErrorTrailer>();
    assert.equal(trailer.status, "error");
    assert.equal(trailer.code, "400");
    // An error before the schema chunk is the only message: a plain request sees a micro error.
    const reply = await f.nc.request(
      f.subjects.dbQueryStream,
      JSON.stringify({ sql: "SELECT nope FROM nowhere" }),
      {
        timeout: 10_000,
      },
    );
    assert.equal(reply.headers?.get(ServiceErrorHeader.Code), "400");
    assert.equal(reply.headers?.get(StreamHeader.Kind), "error");
  });

  test("a request with a bad compression, window or API version is refused with 400", async () => {
    for (const request of [
      { sql: "SELECT 1", compression: "gzip" },
      { sql: "SELECT 1", window: 0 },
      { sql: "SELECT 1", window: 1.5 },
      { sql: "" },
      { params: [] },
    ]) {
      await assert.rejects(
        readArrowStream(f.nc, f.subjects.dbQueryStream, request, { timeoutMs: 10_000 }),
        (err: unknown) => err instanceof StreamFailedError && err.code === 400,
        JSON.stringify(request),
      );
    }
    // An API revision this build does not answer, as for every endpoint.
    await assert.rejects(
      readArrowStream(
        f.nc,
        f.subjects.dbQueryStream,
        { sql: "SELECT 1" },
        { timeoutMs: 10_000, headers: { "Monitor-Api-Version": "2" } },
      ),
      (err: unknown) =>
        err instanceof StreamFailedError && err.code === 400 && /Monitor-Api-Version 2/.test(err.message),
    );
  });

  test("finished streams leave no listener on the catalog's closing signal (nothing keeps their scans alive)", async () => {
    const listeners = () => getEventListeners(f.catalog.closingSignal, "abort").length;
    const before = listeners();
    // One that ends, one cancelled by its client, one failing mid-scan.
    const ended = await readArrowStream(
      f.nc,
      f.subjects.dbQueryStream,
      { sql: "SELECT * FROM range(50000)" },
      {
        timeoutMs: 10_000,
      },
    );
    for await (const _ of ended);
    const cancelled = await readArrowStream(
      f.nc,
      f.subjects.dbQueryStream,
      { sql: LONG },
      { timeoutMs: 10_000 },
    );
    for await (const _ of cancelled) break;
    const failing =
      "SELECT CASE WHEN range = 150000 THEN error('boom') ELSE range END AS v FROM range(200000)";
    await assert.rejects(async () => {
      const stream = await readArrowStream(
        f.nc,
        f.subjects.dbQueryStream,
        { sql: failing },
        { timeoutMs: 10_000 },
      );
      for await (const _ of stream);
    }, StreamFailedError);
    await waitFor(() => f.catalog.pools().readers.busy === 0, { message: "every scan to close" });
    assert.equal(listeners(), before);
  });

  test("503 error trailer while the catalog is not open", async () => {
    f.setOpen(false);
    try {
      await assert.rejects(
        readArrowStream(f.nc, f.subjects.dbQueryStream, { sql: "SELECT 1" }, { timeoutMs: 10_000 }),
        (err: unknown) =>
          err instanceof StreamFailedError && err.code === 503 && /not open/.test(err.message),
      );
    } finally {
      f.setOpen(true);
    }
  });
});

describe("db.query.stream at shutdown", () => {
  test("closing the catalog ends a stream waiting for acks at once, with a 408 error trailer", async () => {
    // An ack timeout far beyond the test's waits: only the shutdown can end this stream.
    await using f = await startStreamFixture({
      ...STREAM_DB,
      queryStream: { maxRows: 0, window: 2, compression: "none", ackTimeoutMs: 600_000 },
    });
    const raw = openRawStream(f.nc, f.subjects.dbQueryStream, { sql: LONG });
    await raw.message(2);
    assert.equal(f.catalog.pools().readers.busy, 1);
    await f.catalog[Symbol.asyncDispose]();
    const outcome = await waitFor(() => f.outcomes[0]);
    assert.equal(outcome.status, "error");
    assert.equal(outcome.status === "error" && outcome.code, 408);
    const trailer = await raw.message(3);
    assert.equal(trailer.headers?.get(StreamHeader.Kind), "error");
    assert.equal(trailer.headers?.get(ServiceErrorHeader.Code), "408");
    raw.close();
  });
});
