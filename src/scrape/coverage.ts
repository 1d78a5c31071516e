import type { GatherResult } from "./gather.ts";
import { versionAtLeast, type Source } from "./sources.ts";

/**
 * Servers that did not answer a source because they are older than its first release. A
 * request nobody answers at all (no responders) is unsupported only by the servers older
 * than that release: a server recent enough, or a source every release serves, not
 * answering it is an error (noResponders), not a server too old.
 */
export function serversTooOld(
  source: Source,
  result: GatherResult,
  answered: ReadonlySet<string>,
  versions: ReadonlyMap<string, string>,
): string[] {
  if (!source.since) return [];
  const replied = new Set(result.kind === "replies" ? result.replies.map((r) => r.server) : []);
  return [...answered]
    .filter((server) => !replied.has(server) && !versionAtLeast(versions.get(server) ?? "0", source.since!))
    .sort();
}

/**
 * The servers of the monitored system: those that answered a request only the system
 * account is answered (not an accountScoped one). A server that answers a connection in
 * another account only its account's imports is no member, and missing the rest is no gap.
 * Every server that answered anything when no such request was asked.
 */
export function systemMembers(
  gathered: readonly { source: Source; result: GatherResult }[],
  answered: ReadonlySet<string>,
): ReadonlySet<string> {
  const systemWide = gathered.filter((g) => !g.source.accountScoped);
  if (systemWide.length === 0) return answered;
  const members = new Set<string>();
  for (const { result } of systemWide)
    if (result.kind === "replies") for (const r of result.replies) members.add(r.server);
  return members;
}

/** Every server with a reply in `gathered`, to any request. */
export function serversInReplies(gathered: readonly { result: GatherResult }[]): string[] {
  return gathered.flatMap(({ result }) =>
    result.kind === "replies" ? result.replies.map((r) => r.server) : [],
  );
}

/** Servers that answered other requests of the epoch and not this one, though not too old for it. */
export function missingReplies(
  result: GatherResult,
  servers: ReadonlySet<string>,
  tooOld: readonly string[],
): string[] {
  const replied = new Set(result.kind === "replies" ? result.replies.map((r) => r.server) : []);
  return [...servers].filter((server) => !replied.has(server) && !tooOld.includes(server)).sort();
}

/**
 * The error of a request nobody answered although `missing` should have: the `$SYS`
 * requests are served in the system account only, and a connection in another account gets
 * answers to the few it imports (the connection list, account statistics).
 */
export function noResponders(source: Source, missing: readonly string[]): string {
  return (
    `no server answered ${source.subject} (no responders), though ${missing.join(", ")} answered other requests: ` +
    "is the connection in the system account?"
  );
}
