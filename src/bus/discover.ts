import { errors, type Msg, type NatsConnection } from "@nats-io/nats-core";
import { PING_SUBJECT, type DiscoveryReply } from "../protocol/index.ts";

/**
 * Broadcasts the discovery ping and collects every node's reply for a window, sorted by
 * node id (spec: the discovery ping). The CLI's `natsmon systems` and the gateway's `GET /systems`
 * both use it. No natsmon node on the bus is an empty answer, not a failure. Any client on
 * the bus may answer the ping: a reply that is not a discovery reply is left out (and
 * counted in `ignored`), so one stray responder cannot break the listing.
 */
export async function discoverNodes(
  nc: NatsConnection,
  windowMs = 1000,
  ignored: { count: number } = { count: 0 },
): Promise<DiscoveryReply[]> {
  const replies: DiscoveryReply[] = [];
  try {
    const iter = await nc.requestMany(PING_SUBJECT, "", { strategy: "timer", maxWait: windowMs });
    for await (const msg of iter) {
      const reply = asDiscoveryReply(msg);
      if (reply) replies.push(reply);
      else ignored.count++;
    }
  } catch (err) {
    // requestMany reports an empty bus as NoRespondersError, request as a RequestError.
    const noResponders =
      err instanceof errors.NoRespondersError || (err instanceof errors.RequestError && err.isNoResponders());
    if (!noResponders) throw err;
  }
  return replies.sort((a, b) => a.node_id.localeCompare(b.node_id));
}

/** The reply when it has what every reader of it relies on: a node id and a list of systems with ids. */
function asDiscoveryReply(msg: Msg): DiscoveryReply | undefined {
  let body: unknown;
  try {
    body = msg.json();
  } catch {
    return undefined;
  }
  if (typeof body !== "object" || body === null) return undefined;
  const { node_id, systems } = body as Partial<Record<keyof DiscoveryReply, unknown>>;
  const valid =
    typeof node_id === "string" &&
    Array.isArray(systems) &&
    systems.every(
      (s: unknown) => typeof s === "object" && s !== null && typeof (s as { id?: unknown }).id === "string",
    );
  return valid ? (body as DiscoveryReply) : undefined;
}
