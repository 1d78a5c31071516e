/**
 * A notifier on a real nats-server with JetStream, fed with transitions as the catalog side
 * feeds it, for the delivery tests. Timings are shortened (retries from 200 ms) so outages
 * play out in seconds; the rules are the production ones.
 */
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { checkDescription } from "../../../src/checks/index.ts";
import type { EndpointConfig } from "../../../src/config/index.ts";
import type { FiringFinding, Severity, Transition } from "../../../src/domain/index.ts";
import { silentLogger, type Logger } from "../../../src/lib/index.ts";
import {
  readDeliveryLog,
  startNotifier,
  type DisabledChecks,
  type Notifier,
  type OutboxPruning,
  type SenderTiming,
} from "../../../src/notify/index.ts";
import type { DeliveryLogEntry, WebhookMessage } from "../../../src/protocol/index.ts";
import type { HttpReceiver, ReceivedRequest } from "../../harness/http-receiver.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { startTestServer, type TestServer } from "../../harness/start-nats-server.ts";

export const FAST: SenderTiming = {
  retryFirstMs: 200,
  retryMaxMs: 1_000,
  resendEveryMs: 3_600_000,
  attemptWaitsMs: [50, 100],
};

/** The alerts of a webhook body as `<status> <alertname> <entity_pk>`. */
export const webhookAlerts = (req: ReceivedRequest): string[] =>
  (req.json() as WebhookMessage).alerts.map((a) => `${a.status} ${a.labels.alertname} ${a.labels.entity_pk}`);

/**
 * The webhook alerts a receiver got at a path (from its request `from` on), and a wait for
 * one of them; `receiver` is read at each call (tests make it in `before`).
 */
export function webhookTrail(receiver: () => HttpReceiver) {
  const sent = (path: string, from = 0) =>
    receiver()
      .requests.slice(from)
      .filter((r) => r.path === path)
      .flatMap(webhookAlerts);
  const until = (path: string, alert: string, from = 0) =>
    waitFor(() => sent(path, from).includes(alert), { message: `${alert} at ${path}` });
  return { sent, until };
}

/** Pruning rounds off: a test that prunes calls pruneOutbox itself, or passes its own timing. */
const NO_PRUNING: OutboxPruning = { everyMs: 0, keepResolvedMs: 0 };

export function endpoint(
  over: Partial<EndpointConfig> & Pick<EndpointConfig, "name" | "url">,
): EndpointConfig {
  return {
    type: "webhook",
    enabled: true,
    subscriptions: ["*"],
    ignore: [],
    systems: [],
    ...over,
  };
}

let epochMs = Date.UTC(2026, 10, 23, 12);
/** Each call is a new epoch, a minute after the previous one. */
export function nextEpoch(): Date {
  epochMs += 60_000;
  return new Date(epochMs);
}

export function finding(pk: number, severity: Severity = "warning", code = "server-011"): FiringFinding {
  return {
    code,
    entityType: "server",
    entityPk: pk,
    entityName: `n${pk}`,
    severity,
    startsAt: new Date(Date.UTC(2026, 10, 23, 11)),
  };
}

export const fire = (f: FiringFinding): Transition => ({ status: "firing", finding: f });
export const resolve = (f: FiringFinding, endsAt: Date): Transition => ({
  status: "resolved",
  finding: f,
  endsAt,
});
export const change = (f: FiringFinding, prevSeverity: Severity): Transition => ({
  status: "changed",
  finding: f,
  prevSeverity,
});

export interface NotifyLab extends AsyncDisposable {
  readonly sink: TestServer;
  readonly nc: NatsConnection;
  readonly nodeId: string;
  /**
   * Starts (or restarts) the node's notifier with these endpoints (and checks disabled per
   * system); the outbox is not pruned unless `pruning` says when. It logs to `log`, by
   * default nowhere.
   */
  start(
    endpoints: readonly EndpointConfig[],
    timing?: SenderTiming,
    disabledChecks?: DisabledChecks,
    pruning?: OutboxPruning,
    log?: Logger,
  ): Promise<Notifier>;
  /** Hands one epoch's transitions to the running notifier, and says it was diffed, as the catalog side does. */
  epoch(transitions: readonly Transition[], system?: string): Promise<Date>;
  log(endpoint?: string): Promise<DeliveryLogEntry[]>;
  stop(): Promise<void>;
}

export async function startNotifyLab(nodeId = "lab"): Promise<NotifyLab> {
  const sink = await startTestServer("notify-sink");
  const nc = await connect({ servers: sink.url });
  let notifier: Notifier | undefined;
  const stop = async () => {
    await notifier?.[Symbol.asyncDispose]();
    notifier = undefined;
  };
  return {
    sink,
    nc,
    nodeId,
    async start(
      endpoints,
      timing = FAST,
      disabledChecks = new Map(),
      pruning = NO_PRUNING,
      log = silentLogger(),
    ) {
      await stop();
      notifier = await startNotifier({
        nc,
        nodeId,
        replicas: 1,
        catalogSystems: ["east", "west"],
        endpoints,
        disabledChecks,
        body: { describe: checkDescription, externalUrl: "https://natsmon.example.com", systemCount: 1 },
        userAgent: "natsmon-test",
        log,
        timing,
        pruning,
      });
      return notifier;
    },
    async epoch(transitions, system = "east") {
      if (!notifier) throw new Error("start the notifier first");
      const epoch = nextEpoch();
      await notifier.enqueue(system, epoch, transitions);
      // As the catalog side says once the epoch is diffed: held first deliveries may go.
      await notifier.epochDiffed(system);
      return epoch;
    },
    log: (name) => readDeliveryLog(nc, nodeId, name === undefined ? {} : { endpoint: name }),
    stop,
    async [Symbol.asyncDispose]() {
      await stop();
      await nc.close();
      await sink[Symbol.asyncDispose]();
    },
  };
}
