/**
 * The delivery log stream as the node creates it, on a real nats-server, fed by real
 * deliveries to a real HTTP receiver (spec: Limits "Delivery log: last 200 deliveries per
 * endpoint, up to 7 days").
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { ensureStream, notifyAssetConfigs } from "../../../src/bus/index.ts";
import { silentLogger } from "../../../src/lib/index.ts";
import { deliver, deliveryLogWriter, readDeliveryLog } from "../../../src/notify/index.ts";
import { startHttpReceiver } from "../../harness/http-receiver.ts";
import { startTestServer } from "../../harness/start-nats-server.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { endpoint } from "./notify-lab.ts";

test("the log of a failing endpoint keeps its last 200 deliveries, each with its three attempts", async () => {
  await using sink = await startTestServer("delivery-log");
  await using receiver = await startHttpReceiver();
  receiver.setStatus(503);
  const nc = await connect({ servers: sink.url });
  try {
    const assets = await notifyAssetConfigs("logged", 1);
    await ensureStream(await jetstreamManager(nc), assets.deliveryLog);
    const write = deliveryLogWriter(nc, "logged", silentLogger());
    const ids: string[] = [];
    const target = endpoint({ name: "down", url: receiver.url });
    for (let i = 0; i < 205; i += 1) {
      await deliver(
        target,
        { body: `{"n":${i}}`, alertCount: 1, systems: ["east"] },
        {
          kind: "change",
          record: (e) => {
            ids.push(e.delivery_id);
            write(e);
          },
          userAgent: "natsmon-test",
          waitsMs: [0, 0],
        },
      );
    }
    assert.equal(receiver.requests.length, 3 * 205, "three attempts per delivery");
    // Writes land in order; once the last delivery is there, every write has landed.
    const logged = await waitFor(
      async () => {
        const entries = await readDeliveryLog(nc, "logged", { endpoint: "down" });
        return entries.at(-1)?.delivery_id === ids.at(-1) && entries;
      },
      { message: "the last delivery in the log" },
    );
    assert.deepEqual(
      logged.map((e) => e.delivery_id),
      ids.slice(-200),
      "the last 200 deliveries, oldest first",
    );
    for (const e of logged) {
      assert.deepEqual(
        e.attempts?.map((a) => `${a.attempt} ${a.outcome} ${a.status_code}`),
        ["1 retry 503", "2 retry 503", "3 retry 503"],
      );
    }
    // Every read above (`deliveries log`, replay) is gone from the server once done.
    const stream = await (await jetstreamManager(nc)).streams.info(assets.deliveryLog.name);
    assert.equal(stream.state.consumer_count, 0, "no consumer left by the reads");
  } finally {
    await nc.close();
  }
});
