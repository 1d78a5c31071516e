import type { NatsConnection } from "@nats-io/nats-core";
import {
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  jetstream,
  type JetStreamClient,
} from "@nats-io/jetstream";
import { NotFoundError, isToken } from "../domain/index.ts";
import { nodeAssets, nodeSubjects, type DeliveryLogEntry } from "../protocol/index.ts";
import type { Logger } from "../lib/index.ts";
import { createHash } from "node:crypto";

/**
 * The id of an endpoint in subjects and consumer names: its name when that is a token,
 * else the name with other characters as `_` and a short hash, so two names never share it.
 */
export function endpointId(name: string): string {
  if (isToken(name)) return name;
  const hash = createHash("sha256").update(name, "utf8").digest("hex").slice(0, 8);
  return `${name.replace(/[^A-Za-z0-9_-]/g, "_")}-${hash}`;
}

/** Records deliveries on the node's delivery log; a failed write is logged and never blocks sending. */
export function deliveryLogWriter(
  nc: NatsConnection,
  nodeId: string,
  log: Logger,
): (entry: DeliveryLogEntry) => void {
  const js: JetStreamClient = jetstream(nc);
  const subjects = nodeSubjects(nodeId);
  return (entry) => {
    js.publish(subjects.webhookDelivery(endpointId(entry.endpoint)), JSON.stringify(entry)).catch(
      (err: unknown) => log.warn({ err, endpoint: entry.endpoint }, "delivery log write failed"),
    );
  };
}

/**
 * Writes one delivery to the node's delivery log and waits for the stream to store it; throws
 * when it cannot (no such stream, no right to publish to it, no answer in `timeoutMs`).
 */
export async function writeDeliveryLogEntry(
  nc: NatsConnection,
  nodeId: string,
  entry: DeliveryLogEntry,
  timeoutMs = 5_000,
): Promise<void> {
  const subject = nodeSubjects(nodeId).webhookDelivery(endpointId(entry.endpoint));
  const stream = nodeAssets(nodeId).deliveryLogStream;
  try {
    await jetstream(nc).publish(subject, JSON.stringify(entry), {
      timeout: timeoutMs,
      expect: { streamName: stream },
    });
  } catch (err) {
    // nats.js reports a publish no stream answers as "jetstream is not enabled", which
    // points at the server's configuration rather than at the missing stream.
    if (err instanceof Error && ["JetStreamNotEnabled", "NoRespondersError"].includes(err.name)) {
      throw new Error(
        `no stream on this bus takes ${subject}: node ${nodeId}'s delivery log stream ${stream} ` +
          "is missing (a node creates it when it starts) or is electing a leader",
        { cause: err },
      );
    }
    throw err;
  }
}

/**
 * The names of the endpoints the node's delivery log holds deliveries of, sorted: read from
 * each endpoint's latest entry, since a subject carries the name only when it is a token.
 */
export async function loggedEndpoints(nc: NatsConnection, nodeId: string): Promise<string[]> {
  const latest = await readDeliveryLog(nc, nodeId, { latestPerEndpoint: true });
  return [...new Set(latest.map((e) => e.endpoint))].sort();
}

/**
 * Reads the delivery log, oldest first: every endpoint or one, from `since` on, or only each
 * endpoint's latest delivery. Reading stops at the last message present when it began.
 */
export async function readDeliveryLog(
  nc: NatsConnection,
  nodeId: string,
  options: { endpoint?: string; since?: Date; latestPerEndpoint?: boolean } = {},
): Promise<DeliveryLogEntry[]> {
  const subjects = nodeSubjects(nodeId);
  const filter =
    options.endpoint === undefined
      ? subjects.webhookDeliveryAll
      : subjects.webhookDelivery(endpointId(options.endpoint));
  const stream = nodeAssets(nodeId).deliveryLogStream;
  const consumer = await jetstream(nc)
    .consumers.get(stream, {
      filter_subjects: filter,
      ...(options.latestPerEndpoint
        ? { deliver_policy: DeliverPolicy.LastPerSubject }
        : options.since
          ? { deliver_policy: DeliverPolicy.StartTime, opt_start_time: options.since.toISOString() }
          : { deliver_policy: DeliverPolicy.All }),
    })
    .catch((err: unknown) => {
      if (!(err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound)) throw err;
      throw new NotFoundError(
        `node "${nodeId}" keeps no delivery log on this bus (no stream ${stream}): it has no ` +
          "notification endpoints, or no node of that id runs here (`natsmon systems` lists the nodes)",
        { cause: err },
      );
    });
  const entries: DeliveryLogEntry[] = [];
  try {
    if ((await consumer.info(true)).num_pending === 0) return entries;
    const messages = await consumer.consume({ max_messages: 1000 });
    try {
      for await (const m of messages) {
        try {
          entries.push(m.json<DeliveryLogEntry>());
        } catch {
          // Not an entry natsmon wrote; the log is read, not judged.
        }
        if (m.info.pending === 0) break;
      }
    } finally {
      messages.stop();
    }
    return entries;
  } finally {
    // Or the server keeps it for its five-minute inactive threshold, one per read.
    await consumer.delete().catch(() => false);
  }
}
