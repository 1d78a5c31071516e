import type { NatsConnection } from "@nats-io/nats-core";
import { PING_SUBJECT, type DiscoveryReply } from "../protocol/index.ts";

/** Broadcasts the discovery ping and collects every node's reply for a window. */
export async function discover(nc: NatsConnection, windowMs = 1000): Promise<DiscoveryReply[]> {
  const replies: DiscoveryReply[] = [];
  try {
    const iter = await nc.requestMany(PING_SUBJECT, "", { strategy: "timer", maxWait: windowMs });
    for await (const msg of iter) replies.push(msg.json<DiscoveryReply>());
  } catch (err) {
    // No natsmon node on this bus: an empty answer, not a failure.
    if ((err as { isNoResponders?: () => boolean }).isNoResponders?.() !== true) throw err;
  }
  return replies.sort((a, b) => a.node_id.localeCompare(b.node_id));
}

/** The system a client command addresses: the one given, or the only one there is. */
export async function resolveSystem(nc: NatsConnection, given: string | undefined): Promise<string> {
  if (given) return given;
  const ids = new Set((await discover(nc)).flatMap((r) => r.systems.map((s) => s.id)));
  if (ids.size === 1) return [...ids][0]!;
  if (ids.size === 0) throw new Error("no natsmon node answered $MON.ping on this bus; is one running?");
  throw new Error(`several systems answer (${[...ids].sort().join(", ")}); choose one with --system`);
}
