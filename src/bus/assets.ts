import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { JetStreamManager, StreamConfig } from "@nats-io/jetstream";
import { JetStreamApiCodes, JetStreamApiError } from "@nats-io/jetstream";
import {
  nodeAssets,
  nodeSubjects,
  ROLE_CLAIMS_BUCKET,
  systemAssets,
  systemSubjects,
} from "../protocol/index.ts";

const STREAMS_DIR = fileURLToPath(new URL("../../streams/", import.meta.url));

/**
 * Reads a stream definition from `streams/` (the `nats stream add --config` shape) and fills
 * in the `{system_id}` and `{node_id}` tokens.
 */
export async function loadStreamDefinition(
  file: string,
  tokens: { system_id?: string; node_id?: string },
): Promise<StreamConfig> {
  let text = await readFile(`${STREAMS_DIR}${file}`, "utf8");
  for (const [token, value] of Object.entries(tokens)) {
    if (value !== undefined) text = text.replaceAll(`{${token}}`, value);
  }
  return JSON.parse(text) as StreamConfig;
}

/**
 * The scrape stream of one system, checked against the names protocol/ builds, with the
 * limits from configuration (scraper.stream) in place of the file's when given.
 */
export async function scrapeStreamConfig(
  systemId: string,
  replicas: number,
  limits?: { maxAgeMs: number; maxBytes: number },
): Promise<StreamConfig> {
  const config = await loadStreamDefinition("scrape-stream.json", { system_id: systemId });
  const name = systemAssets(systemId).scrapeStream;
  const subject = systemSubjects(systemId).scrapeAll;
  if (config.name !== name || config.subjects.length !== 1 || config.subjects[0] !== subject) {
    throw new Error(`streams/scrape-stream.json does not match protocol/subjects.ts (${name} on ${subject})`);
  }
  if (!limits) return { ...config, num_replicas: replicas };
  const maxAge = limits.maxAgeMs * 1_000_000;
  return {
    ...config,
    num_replicas: replicas,
    max_age: maxAge,
    max_bytes: limits.maxBytes,
    // nats-server refuses a duplicate window longer than the max age.
    duplicate_window: Math.min(config.duplicate_window, maxAge),
  };
}

/**
 * The findings-baseline KV bucket of one system, as the stream behind it (`KV_<bucket>` on
 * `$KV.<bucket>.>`, the layout every NATS KV client binds to), checked against the bucket
 * name protocol/ builds. One value per key: the baseline needs no history.
 */
export async function findingsBucketConfig(systemId: string, replicas: number): Promise<StreamConfig> {
  const config = await loadStreamDefinition("findings-baseline.json", { system_id: systemId });
  const bucket = systemAssets(systemId).findingsBucket;
  if (
    config.name !== `KV_${bucket}` ||
    config.subjects.length !== 1 ||
    config.subjects[0] !== `$KV.${bucket}.>` ||
    config.max_msgs_per_subject !== 1
  ) {
    throw new Error(`streams/findings-baseline.json does not match protocol/subjects.ts (bucket ${bucket})`);
  }
  return { ...config, num_replicas: replicas };
}

/**
 * The delivered-state KV bucket of one system (what each endpoint's receiver was told of its
 * alerts), as the stream behind it, checked against the bucket name protocol/ builds. Every
 * node holding the system's catalog role with an endpoint configured creates it if missing.
 */
export async function deliveredBucketConfig(systemId: string, replicas: number): Promise<StreamConfig> {
  const config = await loadStreamDefinition("notified-state.json", { system_id: systemId });
  const bucket = systemAssets(systemId).deliveredBucket;
  if (
    config.name !== `KV_${bucket}` ||
    config.subjects.length !== 1 ||
    config.subjects[0] !== `$KV.${bucket}.>` ||
    config.max_msgs_per_subject !== 1
  ) {
    throw new Error(`streams/notified-state.json does not match protocol/subjects.ts (bucket ${bucket})`);
  }
  return { ...config, num_replicas: replicas };
}

/**
 * The role-claims KV bucket of the sink (one for every system and node on it), checked
 * against the bucket name protocol/ builds. Its max_age is how long the claim of a holder
 * that stopped refreshing it survives.
 */
export async function claimsBucketConfig(replicas: number): Promise<StreamConfig> {
  const config = await loadStreamDefinition("role-claims.json", {});
  const bucket = ROLE_CLAIMS_BUCKET;
  if (
    config.name !== `KV_${bucket}` ||
    config.subjects.length !== 1 ||
    config.subjects[0] !== `$KV.${bucket}.>` ||
    config.max_msgs_per_subject !== 1 ||
    !(config.max_age > 0)
  ) {
    throw new Error(`streams/role-claims.json does not match protocol/subjects.ts (bucket ${bucket})`);
  }
  return { ...config, num_replicas: replicas };
}

/**
 * The notification assets of one node (architecture §2): the outbox stream and the delivery
 * log, each checked against the names protocol/ builds. The node creates them when at least one
 * endpoint is configured. What receivers know is kept per system (deliveredBucketConfig).
 */
export async function notifyAssetConfigs(
  nodeId: string,
  replicas: number,
): Promise<{ outbox: StreamConfig; deliveryLog: StreamConfig }> {
  const assets = nodeAssets(nodeId);
  const subjects = nodeSubjects(nodeId);
  const load = async (file: string, name: string, subject: string) => {
    const config = await loadStreamDefinition(file, { node_id: nodeId });
    if (config.name !== name || config.subjects.length !== 1 || config.subjects[0] !== subject) {
      throw new Error(`streams/${file} does not match protocol/subjects.ts (${name} on ${subject})`);
    }
    return { ...config, num_replicas: replicas };
  };
  return {
    outbox: await load("outbox.json", assets.outboxStream, subjects.outboxAll),
    deliveryLog: await load("webhook-deliveries.json", assets.deliveryLogStream, subjects.webhookDeliveryAll),
  };
}

/**
 * Creates the stream, or updates it in place when it exists, so start-up is idempotent
 * and a changed definition (say, more replicas) is applied.
 */
export async function ensureStream(
  jsm: JetStreamManager,
  config: StreamConfig,
  options: {
    retryForMs?: number;
    /**
     * Limits an existing stream keeps as they are (the scrape stream's, on a node without the
     * scrape side: the node that writes the stream sets them, and two nodes with different
     * settings would otherwise undo each other's at every start).
     */
    keepLimits?: boolean;
  } = {},
): Promise<void> {
  // A cluster still forming (a peer restarting, a meta leader being elected) refuses
  // placement for a while; a node starting alongside it waits rather than exits.
  const deadline = Date.now() + (options.retryForMs ?? 30_000);
  for (;;) {
    try {
      await ensureStreamOnce(jsm, config, options.keepLimits ?? false);
      return;
    } catch (err) {
      if (!isTransientPlacement(err) || Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
}

function isTransientPlacement(err: unknown): boolean {
  const message = err instanceof Error ? err.message : String(err);
  return /no suitable peers|peer offline|insufficient resources|temporarily unavailable/i.test(message);
}

async function ensureStreamOnce(
  jsm: JetStreamManager,
  wanted: StreamConfig,
  keepLimits: boolean,
): Promise<void> {
  let config = wanted;
  try {
    const info = await jsm.streams.info(config.name);
    const current = info.config;
    if (keepLimits) {
      const { max_age, max_bytes, duplicate_window } = current;
      config = { ...config, max_age, max_bytes, duplicate_window };
    }
    const changed =
      current.num_replicas !== config.num_replicas ||
      current.max_age !== config.max_age ||
      current.duplicate_window !== config.duplicate_window ||
      current.max_bytes !== config.max_bytes ||
      current.allow_direct !== config.allow_direct;
    if (changed) await jsm.streams.update(config.name, { ...current, ...config });
  } catch (err) {
    if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound) {
      await jsm.streams.add(config);
      return;
    }
    throw err;
  }
}
