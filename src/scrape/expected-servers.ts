/**
 * The servers an epoch expects to hear from: every server heard before, and every peer a
 * JetStream meta group names (also one that is down). A server that does not answer stays
 * expected, so it shows as missing (scrape-001) and its findings are kept as they were,
 * until it has not answered for `scraper.forget-after` and is no meta peer: then it is
 * forgotten (a server taken out of service, or one without a configured name, which
 * nats-server names after its id, new at every start). 0 never forgets.
 */
import { formatEpoch } from "../domain/index.ts";
import type { Logger } from "../lib/index.ts";
import type { CommitMarker } from "../protocol/index.ts";

/** Where the set starts: the last commit marker before this process. */
export interface ExpectedSeed {
  readonly servers: readonly string[];
  /** Since when each server has not answered (ms; the marker's servers_unheard_since); others count from `since`. */
  readonly unheardSince: ReadonlyMap<string, number>;
  readonly since: number;
  /** Each meta group's peers as the marker last knew them (the marker's meta_peers). */
  readonly metaPeers: ReadonlyMap<string, readonly string[]>;
}

/**
 * One meta group (one per JetStream domain; a supercluster's clusters share one) as an
 * epoch's JSZ replies show it: the servers that report it and its leader, plus its whole
 * membership when the leader answered (only the leader lists the peers, itself left out).
 */
export interface MetaGroupView {
  readonly peers: ReadonlySet<string>;
  /** The leader's list was there: `peers` is the whole group. */
  readonly complete: boolean;
}

export interface ExpectedAfterEpoch {
  readonly expected: string[];
  /**
   * Each expected server that did not answer this epoch: since when its quiet counts
   * (RFC 3339): its last answer, or when it became expected, moved on by any time the
   * scraper was not running.
   */
  readonly unheardSince: Record<string, string>;
  /** Each meta group's peers as known now (the marker's meta_peers). */
  readonly metaPeers: Record<string, string[]>;
  readonly forgotten: string[];
}

export class ExpectedServers {
  /** Server name → when it last answered (ms); servers never heard count from when they became expected. */
  private readonly heard = new Map<string, number>();
  /**
   * Meta group name → its peers, whole as the leader last listed them plus any server
   * reporting the group since. A group whose whole membership was never known holds
   * forgetting back: a peer that is down could be missing from what the others report.
   */
  private readonly metaGroups = new Map<string, { peers: Set<string>; known: boolean; reported: number }>();

  private readonly forgetAfterMs: number;
  private readonly log: Logger;
  /** The seed's epoch until the first epoch of this process: the time between was not observed. */
  private seededAt: number | undefined;

  constructor(forgetAfterMs: number, log: Logger, seed?: ExpectedSeed) {
    this.forgetAfterMs = forgetAfterMs;
    this.log = log;
    for (const server of seed?.servers ?? [])
      this.heard.set(server, seed!.unheardSince.get(server) ?? seed!.since);
    if (seed) this.seededAt = seed.since;
    for (const [group, peers] of seed?.metaPeers ?? [])
      this.metaGroups.set(group, { peers: new Set(peers), known: true, reported: seed!.since });
  }

  /** The servers expected so far, before the next epoch is observed. */
  get servers(): ReadonlySet<string> {
    return new Set(this.heard.keys());
  }

  /**
   * The epoch at `at` (ms) heard `answered`, and showed the meta groups `meta` (by domain).
   * Returns the servers expected in this epoch.
   */
  observe(
    at: number,
    answered: ReadonlySet<string>,
    meta: ReadonlyMap<string, MetaGroupView>,
  ): ExpectedAfterEpoch {
    // While natsmon was down nobody was observed: quiet time counts up to the seed's epoch
    // and again from now, so a restart after a long stop does not forget at once.
    if (this.seededAt !== undefined) {
      const gap = Math.max(0, at - this.seededAt);
      for (const [server, last] of this.heard) this.heard.set(server, last + gap);
      for (const group of this.metaGroups.values()) group.reported += gap;
      this.seededAt = undefined;
    }
    for (const server of answered) this.heard.set(server, at);
    for (const [name, view] of meta) {
      const group = this.metaGroups.get(name);
      if (view.complete) this.metaGroups.set(name, { peers: new Set(view.peers), known: true, reported: at });
      else if (group) {
        for (const peer of view.peers) group.peers.add(peer);
        group.reported = at;
      } else this.metaGroups.set(name, { peers: new Set(view.peers), known: false, reported: at });
    }
    // A group no server has reported for forget-after (a whole cluster taken away, or its
    // JetStream turned off) names no peers any more: nobody is left to peer-remove them.
    if (this.forgetAfterMs > 0 && answered.size > 0) {
      for (const [name, group] of this.metaGroups) {
        if (at - group.reported >= this.forgetAfterMs) this.metaGroups.delete(name);
      }
    }
    const peers = new Set([...this.metaGroups.values()].flatMap((g) => [...g.peers]));
    for (const peer of peers) if (!this.heard.has(peer)) this.heard.set(peer, at);
    const forgotten: string[] = [];
    // An epoch no server answered saw nothing (a scraper-side problem), and a meta group
    // never seen whole may be missing a peer that is down: neither forgets anyone.
    const sure = answered.size > 0 && [...this.metaGroups.values()].every((g) => g.known);
    if (this.forgetAfterMs > 0 && sure) {
      for (const [server, last] of this.heard) {
        if (answered.has(server) || peers.has(server) || at - last < this.forgetAfterMs) continue;
        this.heard.delete(server);
        forgotten.push(server);
      }
    }
    if (forgotten.length > 0) {
      this.log.info(
        { servers: forgotten.sort(), forget_after_ms: this.forgetAfterMs },
        "servers no longer expected: not heard from for scraper.forget-after, and not JetStream meta peers; " +
          "their scrape-001 findings resolve, and so do their other findings",
      );
    }
    const expected = [...this.heard.keys()].sort();
    const unheardSince: Record<string, string> = {};
    for (const server of expected) {
      if (!answered.has(server)) unheardSince[server] = formatEpoch(new Date(this.heard.get(server)!));
    }
    const metaPeers: Record<string, string[]> = {};
    for (const [name, group] of [...this.metaGroups].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      if (group.known) metaPeers[name] = [...group.peers].sort();
    }
    return { expected, unheardSince, metaPeers, forgotten };
  }
}

/**
 * The meta groups JSZ replies show, by JetStream domain. Every server in a clustered JetStream reports
 * its group (name, leader); only the leader lists the other peers, offline ones too.
 */
export function metaGroupViews(
  replies: readonly { readonly server: string; readonly envelope: unknown }[],
): Map<string, MetaGroupView> {
  const groups = new Map<string, { peers: Set<string>; complete: boolean }>();
  for (const reply of replies) {
    const data = (reply.envelope as { data?: { meta_cluster?: MetaCluster; config?: { domain?: unknown } } })
      ?.data;
    const meta = data?.meta_cluster;
    if (typeof meta !== "object" || meta === null) continue;
    // meta_cluster.name is the reporting server's own cluster: a supercluster's clusters
    // report different names for one group. The group is the domain's ("" when none).
    const name = typeof data?.config?.domain === "string" ? data.config.domain : "";
    const group = groups.get(name) ?? { peers: new Set<string>(), complete: false };
    groups.set(name, group);
    group.peers.add(reply.server);
    if (typeof meta.leader === "string" && meta.leader !== "") group.peers.add(meta.leader);
    if (!Array.isArray(meta.replicas)) continue;
    group.complete = true;
    for (const peer of meta.replicas as { name?: unknown }[]) {
      if (typeof peer?.name === "string" && peer.name !== "") group.peers.add(peer.name);
    }
  }
  return groups;
}

interface MetaCluster {
  leader?: unknown;
  replicas?: unknown;
}

/** The seed a commit marker gives: its expected servers, counted from its epoch unless it says since when. */
export function expectedSeed(marker: CommitMarker): ExpectedSeed {
  const unheardSince = new Map<string, number>();
  for (const [server, since] of Object.entries(marker.servers_unheard_since ?? {})) {
    const ms = Date.parse(since);
    if (Number.isFinite(ms)) unheardSince.set(server, ms);
  }
  return {
    servers: marker.servers_expected,
    unheardSince,
    since: Date.parse(marker.epoch),
    metaPeers: new Map(Object.entries(marker.meta_peers ?? {})),
  };
}
