import { z } from "zod";
import { isToken } from "../domain/index.ts";
import { parseListenAddress } from "../lib/index.ts";
import { MAX_TIMER_MS, parseDuration } from "./duration.ts";
import { memoryLimitProblem } from "./memory-limit.ts";
import { parseByteSize, parseStreamBytes } from "./stream-size.ts";

const token = z.string().refine(isToken, "must be a token of letters, digits, _ and - only");
const duration = z
  .string()
  .refine((v) => parseDuration(v) !== undefined, 'must be a duration such as "30s", "1m" or "768h"')
  .transform((v) => parseDuration(v)!);
/**
 * A duration natsmon waits with a timer: at least `min` (a timer of 0 fires at once, every
 * time) and no longer than Node can time (MAX_TIMER_MS).
 */
function timer(minMs: number, min: string) {
  return duration
    .refine((ms) => ms >= minMs, `must be at least ${min}`)
    .refine((ms) => ms <= MAX_TIMER_MS, "must be at most 596h, the longest delay Node can time");
}
/** A timeout or quiet window: any wait will do, but not none. */
const timeout = timer(1, "1ms");
/**
 * How often something repeats (a scrape, a memory sample): shorter than 100ms, a scrape of
 * every server, or a sample of the catalog, runs back to back with the next.
 */
const period = timer(100, "100ms");
const natsUrl = z
  .string()
  .refine(
    (v) => v.split(",").every((u) => !/^wss?:\/\//i.test(u.trim())),
    "must not be a websocket URL (ws://, wss://): natsmon speaks NATS's own protocol, so give the servers' client port (nats:// or tls://)",
  )
  .refine(
    (v) =>
      v
        .split(",")
        .every((u) => /^(nats|tls|wss?):\/\/[^/\s]+/i.test(u.trim()) || /^[\w.-]+:\d+$/.test(u.trim())),
    "must be nats://host:port or tls://host:port (host:port alone is nats://), comma-separated for several",
  );
const labels = z.record(z.string(), z.string());
/** An HTTP listener's host:port ([ipv6]:port, :port for every interface, port 0: any). */
const listenAddress = z.string().superRefine((v, ctx) => {
  try {
    parseListenAddress(v);
  } catch (err) {
    ctx.addIssue({ code: "custom", message: (err as Error).message });
  }
});
/** DuckDB's memory_limit, trimmed as DuckDB would read it. */
const memoryLimit = z
  .string()
  .trim()
  .superRefine((v, ctx) => {
    const problem = memoryLimitProblem(v);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

/** db.checkpoint-threshold's bounds: a checkpoint at nearly every commit, and slips. */
const MIN_CHECKPOINT_BYTES = 1e6;
const MAX_CHECKPOINT_BYTES = 64e9;
/**
 * DuckDB's checkpoint_threshold in bytes: the WAL size at which a commit (a fold's) moves the
 * WAL into the catalog file. Above 64GB it can only be a slip: DuckDB keeps what it has not
 * checkpointed in its memory.
 */
const checkpointThreshold = z
  .string({ error: 'must be a size such as "128MiB" or "1GB"' })
  .trim()
  .transform((v, ctx) => {
    const parsed = parseByteSize(v, false);
    const problem =
      "problem" in parsed
        ? parsed.problem
        : parsed.bytes < MIN_CHECKPOINT_BYTES
          ? `must be at least 1MB ("${v}"): below it the catalog would checkpoint at nearly every fold`
          : parsed.bytes > MAX_CHECKPOINT_BYTES
            ? `must be at most 64GB ("${v}"): DuckDB keeps what it has not checkpointed in memory`
            : undefined;
    if (problem === undefined && "bytes" in parsed) return parsed.bytes;
    ctx.addIssue({ code: "custom", message: problem ?? "" });
    return z.NEVER;
  });

/**
 * DuckDB's threads; 0 leaves DuckDB its default, a thread per core. DuckDB 1.5 takes any count
 * up to 2^31-1 and starts every thread when the catalog opens (tried on the installed
 * @duckdb/node-api 1.5.6): 100000 took all of a machine's 32768 process ids and 1 GB, and
 * 2^32 fails to open. The bound is above the hardware threads of the largest servers (768 on
 * two 192-core sockets with SMT), so it refuses only slips; more than this machine's cores is
 * a warning (threadsWarnings), since `config check` may run on another machine.
 */
export const MAX_DB_THREADS = 1024;
const THREADS_RANGE = `must be 0 (a thread per core) or a whole number of threads from 1 to ${MAX_DB_THREADS}`;
const threads = z.number().superRefine((n, ctx) => {
  if (n > MAX_DB_THREADS) {
    ctx.addIssue({
      code: "custom",
      message:
        `${THREADS_RANGE}: DuckDB starts every thread when the catalog opens, and that many would ` +
        "only take the machine's process ids and memory",
    });
  } else if (!Number.isInteger(n) || n < 0) ctx.addIssue({ code: "custom", message: THREADS_RANGE });
});

/**
 * TLS towards NATS servers: the CA that signed their certificates (when it is not one the
 * system trusts), and a client certificate with its key for servers that verify clients
 * (`verify` or `verify_and_map`). Each is a PEM file; the files are checked at start-up
 * (file-settings.ts).
 */
const tlsSchema = z
  .strictObject({
    // Empty is unset, as for creds (an environment variable set to nothing).
    ca: z.string().optional(),
    cert: z.string().optional(),
    key: z.string().optional(),
  })
  .superRefine((tls, ctx) => {
    if (tls.cert && !tls.key)
      ctx.addIssue({ code: "custom", path: ["key"], message: "is required with tls.cert" });
    if (tls.key && !tls.cert)
      ctx.addIssue({ code: "custom", path: ["cert"], message: "is required with tls.key" });
  });

/**
 * GET /metrics over HTTPS: the node's certificate (its chain after it) and key, the CA whose
 * client certificates it requires, and how often the files are checked for a renewal.
 */
const metricsTlsSchema = z
  .strictObject({
    cert: z.string().min(1).optional(),
    key: z.string().min(1).optional(),
    "client-ca": z.string().min(1).optional(),
    check: period.optional(),
  })
  .superRefine((tls, ctx) => {
    if (!tls.cert)
      ctx.addIssue({
        code: "custom",
        path: ["cert"],
        message: "is required: the PEM certificate GET /metrics is served with over HTTPS",
      });
    if (!tls.key)
      ctx.addIssue({
        code: "custom",
        path: ["key"],
        message: "is required: the certificate's private key, PEM",
      });
  });

const natsAuth = {
  creds: z.string().optional(),
  /** A file holding a user's NKEY seed (config-mode `nkey` users). */
  nkey: z.string().optional(),
  user: z.string().optional(),
  password: z.string().optional(),
  token: z.string().optional(),
  tls: tlsSchema.optional(),
};

/** The longest max_age JetStream can hold: nanoseconds in an int64. */
const MAX_STREAM_AGE_MS = Math.floor((2 ** 63 - 1) / 1e6);
/**
 * The scrape stream's limits. The least max-age depends on the scrape interval and is checked
 * once the system's settings are merged (streamAgeIssues); "none" (or -1) lifts max-bytes.
 */
const scrapeStreamSchema = z.strictObject({
  "max-age": duration
    .refine((ms) => ms <= MAX_STREAM_AGE_MS, "must be at most 2562047h, the longest JetStream can count")
    .optional(),
  "max-bytes": z
    .union([z.string().trim(), z.literal(-1)], {
      error: 'must be a size such as "1GB" or "512MiB", or "none"',
    })
    .transform((v, ctx) => {
      const parsed = parseStreamBytes(String(v));
      if ("bytes" in parsed) return parsed.bytes;
      ctx.addIssue({ code: "custom", message: parsed.problem });
      return z.NEVER;
    })
    .optional(),
});

export const scraperSchema = z.strictObject({
  interval: period.optional(),
  quiet: timeout.optional(),
  timeout: timeout.optional(),
  "disconnect-bucket": duration.refine((ms) => ms >= 1000, "must be at least 1s").optional(),
  // 0 keeps no history; the buckets are still published as they close.
  "disconnect-history": duration.optional(),
  // A server not heard from this long, and no JetStream meta peer, is no longer expected; 0 never forgets.
  "forget-after": duration.optional(),
  // The scrape stream of the system on the sink (max_age, max_bytes), applied at start-up.
  stream: scrapeStreamSchema.optional(),
});

export const dbSchema = z.strictObject({
  // 0 keeps everything.
  retention: duration.optional(),
  "memory-limit": memoryLimit.optional(),
  "checkpoint-threshold": checkpointThreshold.optional(),
  threads: threads.optional(),
  "query-max-rows": z.number().int().positive().optional(),
  "query-timeout": timeout.optional(),
  "query-stream": z
    .strictObject({
      "max-rows": z.number().int().min(0).optional(),
      window: z.number().int().positive().optional(),
      compression: z.enum(["none", "lz4", "zstd"]).optional(),
      "ack-timeout": timeout.optional(),
    })
    .optional(),
  "memory-profile": z
    .strictObject({ enabled: z.boolean().optional(), interval: period.optional() })
    .optional(),
});

const perSystem = {
  scraper: scraperSchema.optional(),
  db: dbSchema.optional(),
  "disabled-checks": z.array(z.string()).optional(),
  "check-thresholds": z.record(z.string(), z.record(z.string(), z.number())).optional(),
};

export const systemSchema = z.strictObject({
  id: token,
  roles: z
    .array(z.enum(["scrape", "catalog"]))
    .min(1, "must name at least one role")
    .refine((r) => new Set(r).size === r.length, "must not repeat a role")
    .optional(),
  metadata: labels.optional(),
  nats: z
    .strictObject({
      url: natsUrl,
      ...natsAuth,
      accounts: z
        .array(
          z.strictObject({
            name: z
              .string({ error: (i) => (i.input === undefined ? "is required" : "must be a string") })
              .min(1, "is required"),
            ...natsAuth,
          }),
        )
        .refine(
          (list) => new Set(list.map((a) => a.name)).size === list.length,
          "must not name an account twice",
        )
        .optional(),
    })
    .optional(),
  ...perSystem,
});

const endpointSchema = z.strictObject({
  name: z.string().min(1, "is required").optional(),
  url: z.string().optional(),
  enabled: z.boolean().optional(),
  "auth-type": z.string().optional(),
  "auth-user": z.string().optional(),
  "auth-token": z.string().optional(),
  subscriptions: z.array(z.string()).optional(),
  ignore: z.array(z.string()).optional(),
  systems: z.array(z.string()).optional(),
  tls: tlsSchema.optional(),
  "proxy-url": z.string().optional(),
  headers: z.record(z.string(), z.string()).optional(),
});
export type RawEndpoint = z.infer<typeof endpointSchema>;

export const fileSchema = z.strictObject({
  node: z
    .strictObject({
      id: token.optional(),
      metadata: labels.optional(),
      "data-dir": z.string().min(1).optional(),
      "metrics-listen": listenAddress.optional(),
      "metrics-nats": z.enum(["all", "servers", "off"]).optional(),
      "metrics-token-file": z.string().min(1).optional(),
      "metrics-tls": metricsTlsSchema.optional(),
    })
    .refine((n) => n["metrics-token-file"] === undefined || n["metrics-listen"] !== undefined, {
      message:
        "metrics-token-file protects GET /metrics, which is served only with node.metrics-listen: set it, or leave the token out",
      path: ["metrics-token-file"],
    })
    .refine((n) => n["metrics-tls"] === undefined || n["metrics-listen"] !== undefined, {
      message:
        "metrics-tls serves GET /metrics over HTTPS, which is served only with node.metrics-listen: set it, or leave metrics-tls out",
      path: ["metrics-tls"],
    })
    .optional(),
  sink: z
    .strictObject({
      url: natsUrl.optional(),
      ...natsAuth,
      replicas: z.number().int().min(1).max(5).optional(),
      embedded: z
        .strictObject({
          host: z.string().min(1).optional(),
          port: z.number().int().min(-1).max(65535).optional(),
          binary: z.string().optional(),
        })
        .optional(),
    })
    .optional(),
  system: systemSchema.optional(),
  systems: z.array(systemSchema).optional(),
  ...perSystem,
  web: z.strictObject({ "external-url": z.url().optional() }).optional(),
  notifications: z
    .strictObject({
      webhook: z.array(endpointSchema).optional(),
      alertmanager: z.array(endpointSchema).optional(),
    })
    .optional(),
  log: z
    .strictObject({ level: z.enum(["trace", "debug", "info", "warn", "error", "fatal"]).optional() })
    .optional(),
});
export type RawConfig = z.infer<typeof fileSchema>;
export type RawSystem = z.infer<typeof systemSchema>;
