import type { NatsConnection } from "@nats-io/nats-core";
import { discoverNodes } from "../bus/index.ts";

/** The system a client command addresses: the one given, or the only one there is. */
export async function resolveSystem(nc: NatsConnection, given: string | undefined): Promise<string> {
  if (given) return given;
  const ids = new Set((await discoverNodes(nc)).flatMap((r) => r.systems.map((s) => s.id)));
  if (ids.size === 1) return [...ids][0]!;
  if (ids.size === 0) throw new Error("no natsmon node answered $MON.ping on this bus; is one running?");
  throw new Error(`several systems answer (${[...ids].sort().join(", ")}); choose one with --system`);
}

/** True when some node's discovery reply lists `system` (whatever its roles there). */
export async function systemListed(nc: NatsConnection, system: string): Promise<boolean> {
  return (await discoverNodes(nc)).some((r) => r.systems.some((s) => s.id === system));
}

/**
 * The message for a system nothing answers for, a mistyped id as often as a stopped node:
 * what went unanswered, and where the systems that do answer are listed.
 */
export function noNodeServes(system: string, unanswered: string): string {
  return `no node serves system "${system}" (${unanswered}); \`natsmon systems\` lists the systems on this bus`;
}
