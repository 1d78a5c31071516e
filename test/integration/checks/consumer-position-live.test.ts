/**
 * consumer-004 against one real nats-server 2.9.10, scraped with natsmon's own requests and
 * folded: a stream whose messages age out (max_age), with three durables:
 * - `rare`, filtered on filt.rare, which delivered the one message on its filter: the busy
 *   subject's messages aging out move the stream's first sequence past it, and it lost nothing;
 * - `all`, unfiltered, which delivered every message: it sits one below the first sequence of
 *   the emptied stream;
 * - `lagging`, unfiltered, which delivered one message of 51: the other 50 aged out before it
 *   delivered them, which is what the check reports.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { nanos } from "@nats-io/nats-core";
import { AckPolicy, jetstream } from "@nats-io/jetstream";
import { consumer004 } from "../../../src/checks/consumer/consumer-004.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { startLiveServer, type LiveServer } from "./live-fixture.ts";

describe("consumer-004 on a real 2.9.10 server whose stream's messages age out", () => {
  let live: LiveServer;

  before(async () => {
    live = await startLiveServer("pos1", { sources: ["varz", "jsz"] });
  });

  after(async () => {
    await live?.close();
  });

  test("reports the unfiltered consumer that lost messages, not a filtered one nor one that delivered everything", async () => {
    const jsm = await live.jsm();
    const js = jetstream(live.app);
    await jsm.streams.add({ name: "FILT", subjects: ["filt.>"], max_age: nanos(2_000) });
    await jsm.consumers.add("FILT", {
      durable_name: "rare",
      ack_policy: AckPolicy.Explicit,
      filter_subject: "filt.rare",
    });
    for (const name of ["all", "lagging"]) {
      await jsm.consumers.add("FILT", { durable_name: name, ack_policy: AckPolicy.Explicit });
    }
    async function read(consumer: string, count: number) {
      const messages = await (await js.consumers.get("FILT", consumer)).fetch({ max_messages: count });
      let seen = 0;
      for await (const m of messages) {
        await m.ackAck();
        if (++seen === count) break;
      }
    }

    await js.publish("filt.rare", "r");
    for (let i = 0; i < 50; i++) await js.publish("filt.busy", `b${i}`);
    await read("rare", 1);
    await read("all", 51);
    await read("lagging", 1);
    await waitFor(async () => (await jsm.streams.info("FILT")).state.messages === 0, {
      message: "FILT's messages to age out",
    });

    const rows = await live.checkNow(consumer004);
    assert.deepEqual(
      rows.map((r) => [r.entity_name, r.delivered_stream_seq, r.stream_first_seq, r.skipped]),
      [["APP/FILT/lagging", 1n, 52n, 50n]],
    );
  });
});
