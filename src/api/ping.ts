import type { NatsConnection, Subscription } from "@nats-io/nats-core";
import { PING_SUBJECT, type DiscoveryReply } from "../protocol/index.ts";
import type { Logger } from "../lib/index.ts";

/**
 * The discovery ping (PING_SUBJECT): a plain subscription (no queue group), so every node answers a broadcast
 * discovery request (spec: $MON.ping).
 */
export function answerPing(nc: NatsConnection, reply: () => DiscoveryReply, log: Logger): Subscription {
  return nc.subscribe(PING_SUBJECT, {
    callback: (err, msg) => {
      if (err) {
        log.error({ err, subject: PING_SUBJECT }, "discovery subscription failed");
        return;
      }
      try {
        msg.respond(JSON.stringify(reply()));
      } catch (error) {
        log.error({ err: error }, "could not answer $MON.ping");
      }
    },
  });
}
