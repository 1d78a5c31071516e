/**
 * Handing a commit marker back to its consumer at once (split from scrape-stream.ts): the
 * catalog side does it for the marker of an epoch it leaves, on a stop or on losing its role.
 */
import type { NatsConnection } from "@nats-io/nats-core";
import type { JetStreamManager, JsMsg } from "@nats-io/jetstream";
import { settlesWithin } from "../lib/index.ts";

/**
 * NAKs a marker once its pull has stopped. nats-server 2.9 gives a NAKed message to a pull
 * request still queued on the server even when its subscriber has gone (the pull that just
 * stopped), then holds it until the ack wait: asking for the consumer's info first makes the
 * server drop the queued requests nobody listens to any more. The flush after the NAK answers
 * once the server has read it (it reads a connection's messages in order), so the stop does
 * not close the connection before. Rejects when that is not all done within `timeoutMs`.
 */
export async function handBack(
  nc: NatsConnection,
  jsm: JetStreamManager,
  stream: string,
  durable: string,
  m: JsMsg,
  timeoutMs: number,
): Promise<void> {
  let late = false;
  const steps = (async () => {
    await jsm.consumers.info(stream, durable);
    // Given up on meanwhile: the stop has gone on, and the ack wait redelivers the marker.
    if (late) return;
    m.nak();
    await nc.flush();
  })();
  if (!(await settlesWithin(steps, timeoutMs))) {
    late = true;
    throw new Error(`the sink did not answer within ${timeoutMs} ms`);
  }
  await steps;
}
