/**
 * Which server's copy of a replicated asset to believe (nats-monitoring.md §0.5, §3.3):
 * every server reports every stream and consumer it holds a replica of, and followers'
 * state is stale. Only the leader's reply (`cluster.leader == server name`) is trusted,
 * or the one reply for an asset that is not replicated and has no leader (a server
 * outside any cluster). A pure decision, table-tested in test/unit/catalog.
 */

/** One server's report of an asset. */
export interface Sighting<T> {
  /** Name of the server whose reply this is. */
  readonly server: string;
  /** `cluster.leader` in that reply, if any. */
  readonly leader: string | undefined;
  /** Effective replica count from the asset's configuration (1 when unknown). */
  readonly replicas: number;
  readonly report: T;
}

export type TrustDecision<T> =
  | { readonly trusted: Sighting<T>; readonly conflict?: string }
  | { readonly trusted: undefined; readonly conflict?: string };

export function pickTrusted<T>(sightings: readonly Sighting<T>[]): TrustDecision<T> {
  // The common case, exactly one server claiming the lead, needs no sorting.
  let leader: Sighting<T> | undefined;
  let claims = 0;
  for (const s of sightings) {
    if (s.leader === s.server) {
      leader = s;
      claims++;
    }
  }
  if (claims === 1) return { trusted: leader! };
  const byName = [...sightings].sort((a, b) => (a.server < b.server ? -1 : a.server > b.server ? 1 : 0));
  const leaders = byName.filter((s) => s.leader === s.server);
  if (leaders.length === 1) return { trusted: leaders[0]! };
  if (leaders.length > 1) {
    // During an election two servers can each still claim the leadership. Keep one, the
    // same one every time (first by name), and say so.
    const names = leaders.map((s) => s.server).join(", ");
    return { trusted: leaders[0]!, conflict: `${names} all claim to lead; kept ${leaders[0]!.server}` };
  }
  const only = byName.length === 1 ? byName[0]! : undefined;
  if (only && only.leader === undefined && only.replicas <= 1) return { trusted: only };
  if (byName.length > 1 && byName.every((s) => s.leader === undefined)) {
    return {
      trusted: undefined,
      conflict: `reported by ${byName.map((s) => s.server).join(", ")} with no leader; not trusted`,
    };
  }
  // The leader did not answer (or the one reply is a follower's): no figures this epoch.
  return { trusted: undefined };
}
