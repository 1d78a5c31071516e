import { arch, platform } from "node:os";
import { Session } from "node:inspector/promises";
import { once } from "node:events";
import { createGzip } from "node:zlib";
import type { NatsConnection } from "@nats-io/nats-core";
import type { NodeOpsPort } from "../api/index.ts";
import { MonError, NotFoundError } from "../domain/index.ts";
import { VERSION, type NodeMetrics } from "../lib/index.ts";
import type { PprofReply, VersionCheckReply } from "../protocol/index.ts";
import type { Sink } from "./sink.ts";
import { PPROF_BUCKET, storeProfile } from "./profile-store.ts";

/** Where `ops.version.check` asks for the newest release (npm's registry). */
export const DEFAULT_REGISTRY = "https://registry.npmjs.org";
const PACKAGE = "natsmon";
const REGISTRY_TIMEOUT_MS = 5_000;

/** The node's own ops endpoints: version, update check, embedded server, profiles, metrics. */
export function nodeOpsPort(options: {
  nodeId: string;
  sink: Sink;
  metrics: NodeMetrics;
  /** Replicas of natsmon's assets on the sink (the profile store's). */
  replicas: number;
  /** Base URL of the npm registry (tests point it at a local server). */
  registry?: string;
}): NodeOpsPort {
  const started = new Date();
  const registry = (options.registry ?? DEFAULT_REGISTRY).replace(/\/+$/, "");
  let lastCheck: VersionCheckReply | undefined;
  return {
    version: () => ({
      node_id: options.nodeId,
      version: VERSION,
      node: process.version,
      platform: platform(),
      arch: arch(),
      started_at: started.toISOString(),
      uptime_seconds: Math.round((Date.now() - started.getTime()) / 1000),
      ...(lastCheck ? { last_check: lastCheck } : {}),
    }),
    async checkVersion() {
      lastCheck = await askRegistry(registry);
      return lastCheck;
    },
    natsInfo() {
      const embedded = options.sink.embedded;
      if (!embedded) {
        throw new NotFoundError(
          `the sink is external (${options.sink.url}); ops.nats.info describes natsmon's embedded server only — ask that server's own monitoring (VARZ)`,
        );
      }
      return {
        embedded: true,
        url: options.sink.url,
        pid: embedded.server.pid,
        info: { ...(options.sink.nc.info ?? {}) },
      };
    },
    pprof: (request) =>
      profile(request.type, request.duration_ms ?? 1000, {
        nc: options.sink.nc,
        nodeId: options.nodeId,
        replicas: options.replicas,
      }),
    metrics: () => options.metrics.render(),
  };
}

/** Newest release on the registry against the running one; `unknown`, with the reason, when it cannot be asked. */
async function askRegistry(registry: string): Promise<VersionCheckReply> {
  const base = { current: VERSION, checked_at: new Date().toISOString(), registry };
  try {
    const response = await fetch(`${registry}/${PACKAGE}/latest`, {
      signal: AbortSignal.timeout(REGISTRY_TIMEOUT_MS),
      headers: { accept: "application/json" },
    });
    if (!response.ok)
      return { ...base, status: "unknown", reason: `the registry answered HTTP ${response.status}` };
    const latest = ((await response.json()) as { version?: unknown }).version;
    if (typeof latest !== "string")
      return { ...base, status: "unknown", reason: "the registry named no version" };
    return { ...base, latest, status: newer(latest, VERSION) ? "update-available" : "up-to-date" };
  } catch (err) {
    const cause = (err as Error & { cause?: Error }).cause;
    return {
      ...base,
      status: "unknown",
      reason: `the registry could not be reached: ${cause?.message ?? (err as Error).message}`,
    };
  }
}

/** True when `a` is a later release than `b` (numeric major.minor.patch; a pre-release is not newer). */
export function newer(a: string, b: string): boolean {
  const parse = (v: string) =>
    v
      .split("-")[0]!
      .split(".")
      .map((n) => Number(n) || 0);
  const [x, y] = [parse(a), parse(b)];
  for (let i = 0; i < 3; i++) {
    if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) > (y[i] ?? 0);
  }
  return false;
}

class PayloadTooLargeError extends MonError {
  constructor(message: string) {
    super(413, message);
  }
}

/**
 * A CPU profile (Profiler, for `durationMs`) or a heap snapshot (HeapProfiler) of this
 * process through the inspector, gzip-compressed: in the reply when it fits the bus's
 * max_payload, else stored in the object store MON_PPROF and named (profile-store.ts); 413
 * when it can be stored neither way.
 */
async function profile(
  type: "cpu" | "heap",
  durationMs: number,
  sink: { nc: NatsConnection; nodeId: string; replicas: number },
): Promise<PprofReply> {
  // Compressed as it comes: a large heap's snapshot, joined into one string, would pass V8's
  // longest string and fail.
  const gzip = createGzip();
  const compressed: Buffer[] = [];
  gzip.on("data", (part: Buffer) => compressed.push(part));
  let bytes = 0;
  const write = (text: string) => {
    bytes += Buffer.byteLength(text);
    gzip.write(text);
  };
  const session = new Session();
  session.connect();
  try {
    if (type === "cpu") {
      await session.post("Profiler.enable");
      await session.post("Profiler.start");
      await new Promise((resolve) => setTimeout(resolve, durationMs));
      const { profile: cpu } = await session.post("Profiler.stop");
      write(JSON.stringify(cpu));
    } else {
      session.on("HeapProfiler.addHeapSnapshotChunk", (m) => write(m.params.chunk));
      await session.post("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
    }
  } finally {
    session.disconnect();
    gzip.end();
  }
  await once(gzip, "end");
  const gz = Buffer.concat(compressed);
  const format = type === "cpu" ? ".cpuprofile" : ".heapsnapshot";
  const described = {
    type,
    format,
    ...(type === "cpu" ? { duration_ms: durationMs } : {}),
    bytes,
  };
  const max = sink.nc.info?.max_payload ?? 1024 * 1024;
  // base64 takes 4 bytes per 3, and the reply's other fields some hundred more.
  if (Math.ceil(gz.length / 3) * 4 + 512 <= max) {
    return { ...described, encoding: "gzip+base64", data: gz.toString("base64") };
  }
  const name = `${sink.nodeId}-${type}-${new Date().toISOString().replaceAll(":", "")}${format}.gz`;
  try {
    const object = await storeProfile(sink.nc, sink.replicas, name, gz);
    return { ...described, encoding: "gzip", object };
  } catch (err) {
    throw new PayloadTooLargeError(
      `the ${type} profile is ${gz.length} bytes compressed, over the bus's max_payload of ${max}, ` +
        `and it could not be put in the object store ${PPROF_BUCKET} on the sink: ${(err as Error).message}; ` +
        `grant natsmon's user publish on $O.${PPROF_BUCKET}.> (and $JS.API.>)` +
        (type === "cpu" ? ", or ask for a shorter duration_ms" : ", or raise max_payload on the sink"),
    );
  }
}
