/**
 * The servers an epoch expects to hear from: every server heard before, and every peer the
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
}

export interface ExpectedAfterEpoch {
  readonly expected: string[];
  /**
   * Each expected server that did not answer this epoch: since when (RFC 3339), its last
   * answer, or when it became expected if it never answered.
   */
  readonly unheardSince: Record<string, string>;
  readonly forgotten: string[];
}

export class ExpectedServers {
  /** Server name → when it last answered (ms); servers never heard count from when they became expected. */
  private readonly heard = new Map<string, number>();
  /** The meta group's peers as last reported: an epoch without a JetStream view keeps them. */
  private metaPeers = new Set<string>();

  private readonly forgetAfterMs: number;
  private readonly log: Logger;

  constructor(forgetAfterMs: number, log: Logger, seed?: ExpectedSeed) {
    this.forgetAfterMs = forgetAfterMs;
    this.log = log;
    for (const server of seed?.servers ?? [])
      this.heard.set(server, seed!.unheardSince.get(server) ?? seed!.since);
  }

  /**
   * The epoch at `at` (ms) heard `answered`, and the meta group named `metaPeers` (empty
   * when no server reported one). Returns the servers expected in this epoch.
   */
  observe(at: number, answered: ReadonlySet<string>, metaPeers: ReadonlySet<string>): ExpectedAfterEpoch {
    for (const server of answered) this.heard.set(server, at);
    if (metaPeers.size > 0) this.metaPeers = new Set(metaPeers);
    for (const peer of this.metaPeers) if (!this.heard.has(peer)) this.heard.set(peer, at);
    const forgotten: string[] = [];
    // An epoch no server answered saw nothing (a scraper-side problem): it forgets no one.
    if (this.forgetAfterMs > 0 && answered.size > 0) {
      for (const [server, last] of this.heard) {
        if (answered.has(server) || this.metaPeers.has(server) || at - last < this.forgetAfterMs) continue;
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
    return { expected, unheardSince, forgotten };
  }
}

/** The seed a commit marker gives: its expected servers, counted from its epoch unless it says since when. */
export function expectedSeed(marker: CommitMarker): ExpectedSeed {
  const unheardSince = new Map<string, number>();
  for (const [server, since] of Object.entries(marker.servers_unheard_since ?? {})) {
    const ms = Date.parse(since);
    if (Number.isFinite(ms)) unheardSince.set(server, ms);
  }
  return { servers: marker.servers_expected, unheardSince, since: Date.parse(marker.epoch) };
}
