/**
 * Wire shapes of the node-space ops endpoints the spec leaves "not shown": `ops.version`,
 * `ops.version.check`, `ops.nats.info`, `ops.pprof` (`ops.metrics` answers the Prometheus
 * text format itself).
 */

/** `ops.version`. */
export interface VersionReply {
  node_id: string;
  version: string;
  node: string;
  platform: string;
  arch: string;
  started_at: string;
  uptime_seconds: number;
  /** The last `ops.version.check` answer, when one was made. */
  last_check?: VersionCheckReply;
}

/** `ops.version.check`: asks the npm registry now. */
export interface VersionCheckReply {
  current: string;
  /** `update-available`, `up-to-date`, or `unknown` when the registry could not be asked. */
  status: "update-available" | "up-to-date" | "unknown";
  latest?: string;
  /** Why the status is unknown. */
  reason?: string;
  checked_at: string;
  registry: string;
}

/** `ops.nats.info`: the embedded sink server. */
export interface NatsInfoReply {
  embedded: true;
  url: string;
  pid: number;
  /** The server's INFO as natsmon's connection received it. */
  info: Record<string, unknown>;
}

/** `ops.pprof` request: a CPU profile for a duration, or a heap snapshot. */
export interface PprofRequest {
  type: "cpu" | "heap";
  /** CPU only: how long to sample, 1 to 60000 ms (default 1000). */
  duration_ms?: number;
}

/** `ops.pprof` reply: the profile as Chrome DevTools reads it (.cpuprofile / .heapsnapshot), gzip + base64. */
export interface PprofReply {
  type: "cpu" | "heap";
  /** `.cpuprofile` or `.heapsnapshot`: the file name extension to save it under. */
  format: string;
  duration_ms?: number;
  /** Size of the profile before compression. */
  bytes: number;
  /** `gzip+base64`: the profile is `data`; `gzip`: it was too large for a reply, and is `object`. */
  encoding: "gzip+base64" | "gzip";
  data?: string;
  /** Where a profile too large for one reply was stored (`nats object get <bucket> <name>`), kept an hour. */
  object?: { bucket: string; name: string; size: number };
}
