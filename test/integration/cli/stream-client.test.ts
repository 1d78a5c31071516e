import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "@nats-io/transport-node";
import { headers, type NatsConnection } from "@nats-io/nats-core";
import { Field, Int32, Schema } from "apache-arrow";
import { MonError, ErrorCode } from "../../../src/domain/index.ts";
import { readArrowStream } from "../../../src/cli/index.ts";
import { IpcMessageEncoder } from "../../../src/lib/index.ts";
import { StreamHeader, StreamMessageKind } from "../../../src/protocol/index.ts";
import { startTestServer } from "../../harness/start-nats-server.ts";
import { waitFor } from "../../harness/wait-for.ts";

/** Far beyond the test's own timeout: a read that waits for it shows up as a hang. */
const NEVER_MS = 600_000;

/**
 * A responder on `subject` that sends the schema chunk (when `schema` is set) and then falls
 * silent; returns the acks and cancels the client sends, and the requests it got.
 */
function silentResponder(nc: NatsConnection, subject: string, options: { schema: boolean }) {
  const acks: unknown[] = [];
  const requests: unknown[] = [];
  const ackSubject = `${subject}.acks`;
  nc.subscribe(ackSubject, { callback: (_err, msg) => void acks.push(msg.json()) });
  nc.subscribe(subject, {
    callback: (_err, msg) => {
      requests.push(msg.json());
      if (!options.schema) return;
      const h = headers();
      h.set(StreamHeader.Kind, StreamMessageKind.Chunk);
      h.set(StreamHeader.Seq, "1");
      h.set(StreamHeader.Ack, ackSubject);
      const schema = new Schema([new Field("i", new Int32(), true)]);
      nc.publish(msg.reply!, new IpcMessageEncoder(schema, "none").schemaMessage, { headers: h });
    },
  });
  return { acks, requests };
}

class Stopped extends Error {}

describe("readArrowStream stopped while it waits", () => {
  test("an abort while waiting for the next chunk throws the signal's reason and cancels the stream", async () => {
    await using server = await startTestServer();
    const nc = await connect({ servers: server.url });
    try {
      const responder = silentResponder(nc, "test.silent", { schema: true });
      await nc.flush();
      const stop = new AbortController();
      const reader = await readArrowStream(
        nc,
        "test.silent",
        {},
        { timeoutMs: NEVER_MS, signal: stop.signal },
      );
      const reading = (async () => {
        for await (const _ of reader);
      })();
      await waitFor(() => responder.acks.length === 1);
      stop.abort(new Stopped("stop"));
      await assert.rejects(reading, Stopped);
      await waitFor(() => responder.acks.length === 2);
      assert.deepEqual(responder.acks, [{ seq: 1 }, { cancel: true }]);
    } finally {
      await nc.close();
    }
  });

  test("an abort while waiting for the first chunk throws the signal's reason", async () => {
    await using server = await startTestServer();
    const nc = await connect({ servers: server.url });
    try {
      const responder = silentResponder(nc, "test.mute", { schema: false });
      await nc.flush();
      const stop = new AbortController();
      const opening = readArrowStream(
        nc,
        "test.mute",
        { q: 1 },
        { timeoutMs: NEVER_MS, signal: stop.signal },
      );
      await waitFor(() => responder.requests.length === 1);
      stop.abort(new Stopped("stop"));
      await assert.rejects(opening, Stopped);
      // An aborted signal refuses a new read before anything is sent.
      await assert.rejects(
        readArrowStream(nc, "test.mute", { q: 2 }, { timeoutMs: NEVER_MS, signal: stop.signal }),
        Stopped,
      );
      await nc.flush();
      assert.deepEqual(responder.requests, [{ q: 1 }]);
    } finally {
      await nc.close();
    }
  });

  test("closing the connection ends a wait for the next chunk with a 503", async () => {
    await using server = await startTestServer();
    const nc = await connect({ servers: server.url });
    silentResponder(nc, "test.silent", { schema: true });
    await nc.flush();
    const reader = await readArrowStream(nc, "test.silent", {}, { timeoutMs: NEVER_MS });
    const reading = (async () => {
      for await (const _ of reader);
    })();
    await nc.close();
    await assert.rejects(
      reading,
      (err) =>
        err instanceof MonError &&
        err.code === ErrorCode.Unavailable &&
        /subscription closed/.test(err.message),
    );
  });
});
