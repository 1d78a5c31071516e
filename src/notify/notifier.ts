import type { NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager } from "@nats-io/jetstream";
import { deliveredBucketConfig, ensureStream, notifyAssetConfigs } from "../bus/index.ts";
import type { EndpointConfig } from "../config/index.ts";
import type { FiringFinding, Transition } from "../domain/index.ts";
import { noMetrics, type Logger, type NodeMetrics } from "../lib/index.ts";

import { nodeAssets } from "../protocol/index.ts";
import { endpointId } from "./delivery-log.ts";
import type { BodyContext } from "./bodies.ts";
import { deliveryLogWriter } from "./delivery-log.ts";
import { startEndpointSender, type SenderTiming } from "./endpoint-sender.ts";
import { writeOutbox } from "./outbox.ts";
import { syncOutbox } from "./outbox-sync.ts";
import { readDelivered } from "./delivered-store.ts";
import { pruneOutbox, removeStaleConsumers } from "./outbox-prune.ts";
import { freshEpochs } from "./first-delivery.ts";
import type { DisabledChecks } from "./patterns.ts";
import type { RecordAttempt } from "./send.ts";

/**
 * How often resolved outbox entries are pruned (0: never), and how long they are kept first
 * (they show what was last sent about a finding, in `nats stream view`, for a day).
 */
export interface OutboxPruning {
  readonly everyMs: number;
  readonly keepResolvedMs: number;
}

export const DEFAULT_OUTBOX_PRUNING: OutboxPruning = { everyMs: 3_600_000, keepResolvedMs: 86_400_000 };

/** The node's notification pipeline, as the catalog sides see it. */
export interface Notifier extends AsyncDisposable {
  /**
   * Queues an epoch's transitions for every endpoint; resolves once they are stored in the
   * outbox, so the caller may then save its baseline and ack the epoch.
   */
  enqueue(systemId: string, epoch: Date, transitions: readonly Transition[]): Promise<void>;
  /**
   * Brings a system's outbox in line with its firing set at `epoch` (its baseline), so every
   * endpoint learns of findings that are up though no transition of theirs reached the outbox
   * (up before any endpoint was configured, or carried in by a seeded or first baseline).
   * Called before the system's first diff, and after the epoch that establishes a baseline.
   */
  syncFiring(systemId: string, epoch: Date, firing: ReadonlyMap<string, FiringFinding>): Promise<void>;
  /**
   * Says a system's epoch was diffed (its transitions, or the first baseline's sync, stored in
   * the outbox): endpoints whose receiver knows no alert hold their first delivery until the
   * first such epoch since start, so they are not told what the baseline saved before the
   * stop held firing (first-delivery.ts). Resolves once they have let the system's entries
   * go (the catalog side need not wait for it).
   */
  epochDiffed(systemId: string): Promise<void>;
}

/**
 * ⑥ Starts the node's notification pipeline (architecture §2, §6): with at least one endpoint
 * configured, the outbox stream, the delivered-state bucket of each system it holds the
 * catalog role of and the delivery log exist, and
 * every enabled endpoint has its own sender. Without endpoints nothing is created and
 * enqueueing does nothing. A delivery log that cannot be created (a sink user without rights
 * to it) leaves alerts flowing with no log kept.
 */
export async function startNotifier(options: {
  nc: NatsConnection;
  nodeId: string;
  replicas: number;
  endpoints: readonly EndpointConfig[];
  /** The systems this node holds the catalog role of: only their catalog sides enqueue. */
  catalogSystems: readonly string[];
  /** Codes turned off with `disabled-checks`, by system (baseline rule 3). */
  disabledChecks: DisabledChecks;
  body: BodyContext;
  userAgent: string;
  log: Logger;
  metrics?: NodeMetrics;
  timing?: SenderTiming;
  pruning?: OutboxPruning;
}): Promise<Notifier> {
  const metrics = options.metrics ?? noMetrics();
  const { nc, nodeId } = options;
  const log = options.log.child({ component: "notify" });
  if (options.endpoints.length === 0) {
    return {
      enqueue: async () => {},
      syncFiring: async () => {},
      epochDiffed: async () => {},
      [Symbol.asyncDispose]: async () => {},
    };
  }
  const jsm = await jetstreamManager(nc);
  const assets = await notifyAssetConfigs(nodeId, options.replicas);
  await ensureStream(jsm, assets.outbox);
  for (const system of options.catalogSystems)
    await ensureStream(jsm, await deliveredBucketConfig(system, options.replicas));
  let logAttempt: RecordAttempt = () => {};
  try {
    await ensureStream(jsm, assets.deliveryLog);
    logAttempt = deliveryLogWriter(nc, nodeId, log);
  } catch (err) {
    log.warn(
      { err, stream: assets.deliveryLog.name },
      "the delivery log stream cannot be created; alerts are sent but no log is kept (grant JetStream API access to it)",
    );
  }

  const record: RecordAttempt = (entry) => {
    for (const a of entry.attempts ?? [entry]) metrics.delivery(entry.endpoint, entry.kind, a.outcome);
    logAttempt(entry);
  };

  const enabled = options.endpoints.filter((e) => e.enabled);
  await removeStaleConsumers(
    nc,
    nodeId,
    enabled.map((e) => endpointId(e.name)),
  ).then(
    (removed) => {
      if (removed.length > 0)
        log.info({ consumers: removed }, "outbox consumers of endpoints removed or disabled deleted");
    },
    (err: unknown) =>
      log.warn(
        { err },
        "the outbox consumers of endpoints removed or disabled were not looked for; they hold back outbox pruning (grant $JS.API.CONSUMER.LIST and DELETE on the outbox)",
      ),
  );
  // Notification lag: what each sender has yet to read from the outbox.
  metrics.addOutboxLag(async () => {
    const names = nodeAssets(nodeId);
    return Promise.all(
      enabled.map(async (e) => ({
        labels: { endpoint: e.name },
        value: (await jsm.consumers.info(names.outboxStream, names.endpointConsumer(endpointId(e.name))))
          .num_pending,
      })),
    );
  });
  const fresh = freshEpochs();
  const senders: AsyncDisposable[] = [];
  try {
    for (const endpoint of enabled) {
      senders.push(
        await startEndpointSender({
          nc,
          nodeId,
          endpoint,
          disabledChecks: options.disabledChecks,
          body: options.body,
          record,
          userAgent: options.userAgent,
          log,
          fresh,
          systems: options.catalogSystems.filter(
            (s) => endpoint.systems.length === 0 || endpoint.systems.includes(s),
          ),
          ...(options.timing ? { timing: options.timing } : {}),
        }),
      );
    }
  } catch (err) {
    for (const s of senders) await s[Symbol.asyncDispose]();
    throw err;
  }
  log.info(
    { endpoints: enabled.map((e) => e.name), disabled: options.endpoints.length - enabled.length },
    "notification endpoints started",
  );
  const pruning = startPruning(
    nc,
    nodeId,
    options.catalogSystems,
    options.pruning ?? DEFAULT_OUTBOX_PRUNING,
    log,
  );
  return {
    enqueue: async (systemId, epoch, transitions) => {
      if (enabled.length === 0 || transitions.length === 0) return;
      await writeOutbox(nc, nodeId, systemId, epoch, transitions);
    },
    syncFiring: async (systemId, epoch, firing) => {
      if (enabled.length === 0) return;
      const disabled = options.disabledChecks.get(systemId) ?? [];
      // What any endpoint's receiver was told of the system, by this node or one that held its
      // catalog role before: a known alert no longer firing gets a resolve in the outbox.
      const ids = new Set(enabled.map((e) => endpointId(e.name)));
      const known = new Map(
        (await readDelivered(nc, systemId))
          .filter(({ endpoint }) => ids.has(endpoint))
          .map(({ key, entry }) => [key, entry]),
      );
      const written = await syncOutbox(nc, nodeId, systemId, epoch, firing, disabled, known);
      if (written > 0)
        log.info(
          { system: systemId, written },
          "outbox brought in line with the firing findings: endpoints learn of what is up",
        );
    },
    epochDiffed: (systemId) => fresh.mark(systemId),
    async [Symbol.asyncDispose]() {
      await pruning[Symbol.asyncDispose]();
      for (const s of senders) await s[Symbol.asyncDispose]();
    },
  };
}

/**
 * Prunes the outbox (see pruneOutbox) a minute after start, or sooner when `everyMs` is
 * shorter, then every `everyMs`. A failed round is logged and tried again at the next.
 */
function startPruning(
  nc: NatsConnection,
  nodeId: string,
  systems: readonly string[],
  timing: OutboxPruning,
  log: Logger,
): AsyncDisposable {
  let round: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const schedule = (ms: number) => {
    timer = setTimeout(() => {
      round = pruneOutbox(nc, nodeId, { keepResolvedMs: timing.keepResolvedMs, systems })
        .then(({ deleted, held }) => {
          if (deleted > 0)
            log.info({ deleted, held }, "resolved outbox entries every endpoint has read pruned");
        })
        .catch((err: unknown) =>
          log.warn(
            { err, stream: nodeAssets(nodeId).outboxStream },
            "the outbox was not pruned: resolved entries are kept until the next round (with restricted permissions, grant $JS.API.CONSUMER.LIST and $JS.API.STREAM.MSG.DELETE on the outbox)",
          ),
        )
        .finally(() => {
          if (timer !== undefined) schedule(timing.everyMs);
        });
    }, ms);
  };
  if (timing.everyMs > 0) schedule(Math.min(timing.everyMs, 60_000));
  return {
    async [Symbol.asyncDispose]() {
      clearTimeout(timer);
      timer = undefined;
      await round;
    },
  };
}
