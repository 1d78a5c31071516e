import { createHash } from "node:crypto";
import type { EndpointConfig } from "../config/index.ts";

/**
 * Pattern rule 1: an exact code, a prefix ending in `*`, or `*` alone (every check).
 * Validation (`*` only last, no old-style codes, matches some check) happens at start-up.
 */
export function matchesPattern(pattern: string, code: string): boolean {
  if (pattern === "*") return true;
  return pattern.endsWith("*") ? code.startsWith(pattern.slice(0, -1)) : code === pattern;
}

/**
 * Whether an endpoint receives changes of `code` in `system` (spec: Notification deliveries):
 * enabled, subscribed (an empty list sends nothing, rule 3), not ignored (applied after the
 * subscriptions, rule 2), and the system listed (an empty list means every system, rule 5).
 */
export function endpointWants(
  endpoint: Pick<EndpointConfig, "enabled" | "subscriptions" | "ignore" | "systems">,
  system: string,
  code: string,
): boolean {
  if (!endpoint.enabled) return false;
  if (endpoint.systems.length > 0 && !endpoint.systems.includes(system)) return false;
  if (!endpoint.subscriptions.some((p) => matchesPattern(p, code))) return false;
  return !endpoint.ignore.some((p) => matchesPattern(p, code));
}

/** Codes turned off with `disabled-checks`, by system id. */
export type DisabledChecks = ReadonlyMap<string, readonly string[]>;

/**
 * Whether an endpoint's sender handles `code` in `system` at all: the endpoint wants it and the
 * check is not disabled in that system (baseline rule 3: a disabled check sends nothing, not
 * even the minute's resend of what it had firing).
 */
export function endpointSends(
  endpoint: Pick<EndpointConfig, "enabled" | "subscriptions" | "ignore" | "systems">,
  disabled: DisabledChecks,
  system: string,
  code: string,
): boolean {
  return endpointWants(endpoint, system, code) && !(disabled.get(system)?.includes(code) ?? false);
}

/**
 * Which receiver an endpoint reaches: its type and URL. What natsmon knows the receiver was
 * told belongs to it; an endpoint pointed elsewhere starts over with what is firing now.
 */
export function receiverDigest(endpoint: Pick<EndpointConfig, "type" | "url">): string {
  return createHash("sha256")
    .update(JSON.stringify({ type: endpoint.type, url: endpoint.url }), "utf8")
    .digest("hex")
    .slice(0, 16);
}

/**
 * A short digest of everything that decides which findings an endpoint's sender handles
 * (its subscriptions, ignore list and systems, and the checks disabled per system) and of
 * the receiver it reaches: when it changes, entries the sender once passed over may now be
 * wanted, or a new receiver must be told what is firing.
 */
export function endpointFilterDigest(
  endpoint: Pick<EndpointConfig, "subscriptions" | "ignore" | "systems" | "type" | "url">,
  disabled: DisabledChecks,
): string {
  const sorted = (list: readonly string[]) => [...list].sort();
  const filter = {
    receiver: receiverDigest(endpoint),
    subscriptions: sorted(endpoint.subscriptions),
    ignore: sorted(endpoint.ignore),
    systems: sorted(endpoint.systems),
    disabled: sorted(
      [...disabled]
        .filter(([, codes]) => codes.length > 0)
        .map(([system, codes]) => `${system}:${sorted(codes).join(",")}`),
    ),
  };
  return createHash("sha256").update(JSON.stringify(filter), "utf8").digest("hex").slice(0, 16);
}
