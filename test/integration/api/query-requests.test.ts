/**
 * What db.query and db.query.stream make of a request's body, asked the same way of both
 * with the raw JSON a client sends: parameters bound exactly, statements that are none.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { tableFromIPC } from "apache-arrow";
import { END_OF_STREAM } from "../../../src/lib/index.ts";
import { ServiceErrorHeader, StreamHeader, type StreamErrorTrailer } from "../../../src/protocol/index.ts";
import { batchRows } from "../../../src/cli/arrow-values.ts";
import { openRawStream, startStreamFixture, type StreamFixture } from "./stream-fixture.ts";

const TYPED = "SELECT $1::VARCHAR AS p, typeof($1) AS t";

type Answer = { rows: unknown[][] } | { code: string; description: string };

describe("db.query and db.query.stream requests", () => {
  let f: StreamFixture;

  before(async () => {
    f = await startStreamFixture();
  });

  after(async () => {
    await f?.[Symbol.asyncDispose]();
  });

  /** db.query's answer to `body` (raw JSON text): its rows as arrays, or its error. */
  async function buffered(body: string): Promise<Answer> {
    const reply = await f.nc.request(f.subjects.dbQuery, body, { timeout: 10_000 });
    const code = reply.headers?.get(ServiceErrorHeader.Code);
    if (code) {
      const data = reply.data.length > 0 ? reply.json<{ message: string }>().message : undefined;
      return { code, description: data ?? reply.headers?.get(ServiceErrorHeader.Description) ?? "" };
    }
    return { rows: reply.json<Record<string, unknown>[]>().map((row) => Object.values(row)) };
  }

  /** db.query.stream's answer to `body` (raw JSON text), read off the wire and acked chunk by chunk. */
  async function streamed(body: string): Promise<Answer> {
    const raw = openRawStream(f.nc, f.subjects.dbQueryStream, body);
    try {
      const chunks: Uint8Array[] = [];
      for (let n = 1; ; n++) {
        const msg = await raw.message(n);
        const kind = msg.headers?.get(StreamHeader.Kind);
        if (kind === "error") {
          const trailer = msg.json<StreamErrorTrailer>();
          return { code: trailer.code, description: trailer.description };
        }
        if (kind === "end") break;
        chunks.push(msg.data);
        raw.ack(n);
      }
      return { rows: tableFromIPC([...chunks, END_OF_STREAM]).batches.flatMap((b) => batchRows(b)) };
    } finally {
      raw.close();
    }
  }

  test("an integer beyond 2^53 binds exactly, as BIGINT or HUGEINT, on both endpoints", async () => {
    const cases: [string, unknown[]][] = [
      ["9007199254740993", ["9007199254740993", "BIGINT"]],
      ["-9223372036854775808", ["-9223372036854775808", "BIGINT"]],
      ["9223372036854775808", ["9223372036854775808", "HUGEINT"]],
      ["170141183460469231731687303715884105727", ["170141183460469231731687303715884105727", "HUGEINT"]],
      ["42", ["42", "BIGINT"]],
      ["1.5", ["1.5", "DOUBLE"]],
      ["9007199254740993.0", ["9007199254740992.0", "DOUBLE"]],
    ];
    for (const [literal, expected] of cases) {
      const body = `{"sql": ${JSON.stringify(TYPED)}, "params": [${literal}]}`;
      assert.deepEqual(await buffered(body), { rows: [expected] }, `db.query ${literal}`);
      assert.deepEqual(await streamed(body), { rows: [expected] }, `db.query.stream ${literal}`);
    }
  });

  test("a number no double or HUGEINT holds is a 400, never inf or a rounded value", async () => {
    for (const [literal, pattern] of [
      ["1e400", /params\[0\] is a number beyond DOUBLE's range/],
      ["-1e400", /params\[0\] is a number beyond DOUBLE's range/],
      ["170141183460469231731687303715884105728", /params\[0\] is an integer beyond HUGEINT's range/],
    ] as const) {
      const body = `{"sql": ${JSON.stringify(TYPED)}, "params": [${literal}]}`;
      for (const answer of [await buffered(body), await streamed(body)]) {
        assert.ok("code" in answer && answer.code === "400", `${literal}: ${JSON.stringify(answer)}`);
        assert.match(answer.description, pattern);
      }
    }
  });

  test("a statement of semicolons and comments only is a 400 saying there is no statement", async () => {
    for (const sql of [";", " ; ;", "-- nothing\n;", "/* x */ ;"]) {
      const body = JSON.stringify({ sql });
      for (const answer of [await buffered(body), await streamed(body)]) {
        assert.ok("code" in answer && answer.code === "400", `${sql}: ${JSON.stringify(answer)}`);
        assert.match(answer.description, /got none/);
        assert.doesNotMatch(answer.description, /native callback/);
      }
    }
    // The stream's refusal is its only message.
    const raw = openRawStream(f.nc, f.subjects.dbQueryStream, { sql: ";" });
    const only = await raw.message(1);
    raw.close();
    assert.equal(only.headers?.get(StreamHeader.Kind), "error");
    assert.equal(only.json<StreamErrorTrailer>().code, "400");
  });
});
