import { errors, type NatsConnection } from "@nats-io/nats-core";
import { PING_SUBJECT, type DiscoveryReply } from "../protocol/index.ts";

/**
 * Broadcasts the discovery ping and collects every node's reply for a window, sorted by
 * node id (spec: the discovery ping). The CLI's `natsmon systems` and the gateway's `GET /systems`
 * both use it. No natsmon node on the bus is an empty answer, not a failure.
 */
export async function discoverNodes(nc: NatsConnection, windowMs = 1000): Promise<DiscoveryReply[]> {
  const replies: DiscoveryReply[] = [];
  try {
    const iter = await nc.requestMany(PING_SUBJECT, "", { strategy: "timer", maxWait: windowMs });
    for await (const msg of iter) replies.push(msg.json<DiscoveryReply>());
  } catch (err) {
    // requestMany reports an empty bus as NoRespondersError, request as a RequestError.
    const noResponders =
      err instanceof errors.NoRespondersError || (err instanceof errors.RequestError && err.isNoResponders());
    if (!noResponders) throw err;
  }
  return replies.sort((a, b) => a.node_id.localeCompare(b.node_id));
}
