import type { NatsConnection } from "@nats-io/nats-core";
import type { Logger } from "../lib/index.ts";
import { latestOutboxEntries } from "./outbox.ts";
import type { KeyedEntry } from "./plan-delivery.ts";

/** How long a receiver that knows no alert waits for a fresh epoch at most, unless configured. */
export const DEFAULT_FRESH_EPOCH_WAIT_MS = 120_000;

/**
 * The systems that had an epoch diffed since the notifier started. The catalog sides that
 * write a node's outbox run in that node's process (the outbox is the node's), so they say
 * so here, after the epoch's outbox entries are stored.
 */
export interface FreshEpochs {
  /** Resolves once every endpoint holding a first delivery lets the system's entries go. */
  mark(systemId: string): Promise<void>;
  marked(): readonly string[];
  /** Calls `listener` for each system marked from now on; returns the unsubscribe. */
  onMark(listener: (systemId: string) => Promise<void>): () => void;
}

export function freshEpochs(): FreshEpochs {
  const marked = new Map<string, Promise<void>>();
  const listeners = new Set<(systemId: string) => Promise<void>>();
  return {
    mark(systemId) {
      let done = marked.get(systemId);
      if (done === undefined) {
        done = Promise.all([...listeners].map((l) => l(systemId))).then(() => undefined);
        marked.set(systemId, done);
      }
      return done;
    },
    marked: () => [...marked.keys()],
    onMark(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/**
 * Holds back the first delivery of an endpoint whose receiver knows no alert (new, re-enabled,
 * or pointed at another receiver). At start the outbox holds the firing set of the baseline
 * saved before natsmon stopped: sent as it is, findings that cleared meanwhile would fire and
 * resolve a few seconds later. So a system's entries go once an epoch of it has been diffed
 * since start; its entries older than the latest outbox entry of their finding at that moment
 * are passed over (the newer one, resolve or not, is on its way through the consumer). With no
 * such epoch within `waitMs` (scraper stopped, catalog refused or not open), everything goes.
 */
export interface FirstDeliveryGate extends Disposable {
  /** Whether an entry may be delivered now. */
  opens(entry: KeyedEntry): boolean;
  /** Whether an entry is older than its finding's latest outbox entry when its system freshened. */
  superseded(entry: KeyedEntry & { readonly seq: number }): boolean;
  /** True once the wait is over for every system: the gate holds nothing more. */
  readonly expired: boolean;
}

export function startFirstDeliveryGate(options: {
  nc: NatsConnection;
  nodeId: string;
  fresh: FreshEpochs;
  waitMs: number;
  log: Logger;
  /** The entries the sender holds (batch and queue), to say what goes when the wait runs out. */
  held: () => readonly KeyedEntry[];
  /** A system opened, or the wait ran out: held entries may go now. */
  onChange: () => void;
}): FirstDeliveryGate {
  const { nc, nodeId, log } = options;
  /** Opened systems, with each finding's latest outbox sequence when they freshened. */
  const open = new Map<string, ReadonlyMap<string, number>>();
  const opening = new Map<string, Promise<void>>();
  let expired = false;
  let disposed = false;
  const openSystem = (systemId: string): Promise<void> => {
    if (open.has(systemId) || disposed) return Promise.resolve();
    const already = opening.get(systemId);
    if (already) return already;
    const done = (async () => {
      const latest = new Map<string, number>();
      try {
        for await (const e of latestOutboxEntries(nc, nodeId, systemId)) latest.set(e.key, e.seq);
      } catch (err) {
        // Without it every held entry goes, as after the wait: at worst a stale alert and its resolve.
        log.warn(
          { err, system: systemId },
          "the outbox could not be read to leave out superseded entries; the held alerts go as they are",
        );
        latest.clear();
      }
      opening.delete(systemId);
      if (disposed) return;
      open.set(systemId, latest);
      log.info(
        { system: systemId },
        "an epoch scraped since start that observed everything was diffed: the endpoint's first delivery goes",
      );
      options.onChange();
    })();
    opening.set(systemId, done);
    return done;
  };
  const unsubscribe = options.fresh.onMark(openSystem);
  const timer = setTimeout(() => {
    const systems = [...new Set(options.held().map((e) => e.entry.system))].filter((s) => !open.has(s));
    expired = true;
    unsubscribe();
    if (systems.length > 0)
      log.warn(
        { systems, wait_ms: options.waitMs },
        "no epoch of these systems scraped since start observed everything (every expected server answering in full, every check running, every stream and consumer led): the endpoint is sent the firing set as it stands, which may hold findings that cleared while natsmon was down (their resolves follow once they are observed); a server that stays down keeps its findings held until scraper.forget-after",
      );
    options.onChange();
  }, options.waitMs);
  log.info(
    { wait_ms: options.waitMs },
    "the endpoint's receiver knows no alert yet: its first delivery waits for an epoch scraped since start that observed everything, so findings that cleared while natsmon was down are not sent",
  );
  // Marked before this endpoint's sender started: open at once.
  for (const systemId of options.fresh.marked()) void openSystem(systemId);
  return {
    opens: (entry) => expired || open.has(entry.entry.system),
    superseded: (entry) => {
      const latest = open.get(entry.entry.system)?.get(entry.key);
      return latest !== undefined && latest > entry.seq;
    },
    get expired() {
      return expired;
    },
    [Symbol.dispose]() {
      disposed = true;
      clearTimeout(timer);
      unsubscribe();
    },
  };
}
