import type { NatsConnection, Subscription } from "@nats-io/nats-core";
import { Svcm, type Service } from "@nats-io/services";
import {
  SERVICE_NAME,
  SERVICE_VERSION,
  endpointName,
  nodeSubject,
  systemSubject,
  type DiscoveryReply,
} from "../protocol/index.ts";
import { settlesWithin, type Logger, type NodeMetrics } from "../lib/index.ts";
import { adapt, type ApiHandler } from "./adapter.ts";
import { adaptStream, type StreamHandler } from "./stream-handlers.ts";
import { answerPing } from "./ping.ts";
import { answerUnknownSystems } from "./unknown-system.ts";

/** How long a stop waits for the micro service to drain its subscriptions. */
const SERVICE_STOP_MS = 2_000;

export interface Api extends AsyncDisposable {
  /** Registers each handler on its system-space subject (protocol/systemSubject). */
  addSystemEndpoints(
    systemId: string,
    handlers: Readonly<Record<string, ApiHandler | StreamHandler>>,
  ): Promise<void>;
  /** Registers each handler on its node-space subject (protocol/nodeSubject: `node.<node_id>.<action>`). */
  addNodeEndpoints(handlers: Readonly<Record<string, ApiHandler>>): Promise<void>;
  /**
   * Starts answering $MON.ping, and the streamed endpoints of systems no node serves
   * (unknown-system.ts). node/ calls it once the endpoints the reply advertises are served:
   * a client that finds a system by ping then gets an answer, not "no responders".
   */
  answerPing(): Promise<void>;
}

/**
 * One micro service per node (`monitor` 0.0.1, `node_id` in its metadata) plus the
 * discovery ping subscription, from answerPing() on. Endpoints are added per system and
 * side by node/.
 */
export async function startApi(
  nc: NatsConnection,
  options: { nodeId: string; discovery: () => DiscoveryReply; log: Logger; metrics?: NodeMetrics },
): Promise<Api> {
  const { log } = options;
  const service: Service = await new Svcm(nc).add({
    name: SERVICE_NAME,
    version: SERVICE_VERSION,
    description: "natsmon: monitoring of NATS systems",
    metadata: { node_id: options.nodeId },
  });
  let ping: Subscription[] | undefined;
  /** The subjects this node's endpoints serve. */
  const served = new Set<string>();
  const maxPayload = () => nc.info?.max_payload;
  return {
    async addSystemEndpoints(systemId, handlers) {
      for (const [action, handler] of Object.entries(handlers)) {
        served.add(systemSubject(systemId, action));
        service.addEndpoint(endpointName(systemId, action), {
          subject: systemSubject(systemId, action),
          handler:
            typeof handler === "function"
              ? adapt(handler, log.child({ system: systemId, endpoint: action }), {
                  onOutcome: (outcome) => options.metrics?.request(action, outcome),
                  maxPayload,
                })
              : adaptStream(nc, systemId, handler, log.child({ system: systemId, endpoint: action })),
          metadata: { system_id: systemId },
        });
      }
      await nc.flush();
    },
    async addNodeEndpoints(handlers) {
      for (const [action, handler] of Object.entries(handlers)) {
        service.addEndpoint(endpointName(options.nodeId, `node.${action}`), {
          subject: nodeSubject(options.nodeId, action),
          handler: adapt(handler, log.child({ endpoint: action }), {
            onOutcome: (outcome) => options.metrics?.request(action, outcome),
            maxPayload,
          }),
          metadata: { node_id: options.nodeId },
        });
      }
      await nc.flush();
    },
    async answerPing() {
      ping ??= [
        answerPing(nc, options.discovery, log),
        ...answerUnknownSystems(nc, { servedHere: (subject) => served.has(subject), log }),
      ];
      // A request sent right after subscribing can race the subscription (stack-notes pitfall 1).
      await nc.flush();
    },
    async [Symbol.asyncDispose]() {
      for (const sub of ping ?? []) sub.unsubscribe();
      // The service drains its subscriptions, which waits for the sink: a stuck one never answers.
      if (!(await settlesWithin(service.stop(), SERVICE_STOP_MS))) {
        log.info({ after_ms: SERVICE_STOP_MS }, "the sink did not answer the API's stop; going on");
      }
    },
  };
}
