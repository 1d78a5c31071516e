import { checkSettingIssues, type CheckCatalogue } from "./check-settings.ts";
import type { RawConfig, RawSystem } from "./schema.ts";
import { parseListenAddress } from "../lib/index.ts";
import type { Config, DbConfig, ScraperConfig, SystemConfig } from "./types.ts";
import { buildEndpoints, endpointIssues } from "./endpoints.ts";
import type { Salvaged } from "./salvage.ts";
import { authWarnings } from "./auth-warnings.ts";
import { memoryLimitBytes } from "./stream-size.ts";

export interface ResolveIssue {
  path: string;
  message: string;
}

/** The system a node serves when nothing is configured: its own embedded bus. */
const DEFAULT_SYSTEM: RawSystem = { id: "local" };

type RawScraper = NonNullable<RawConfig["scraper"]>;
type RawDb = NonNullable<RawConfig["db"]>;

const DEFAULT_INTERVAL_MS = 30_000;
/** Scrapes a server may miss before scraper.forget-after may drop it. */
const FORGET_AFTER_MIN_INTERVALS = 3;
/** The scrape stream's max_age as the asset file has always had it: 6h. */
const DEFAULT_STREAM_MAX_AGE_MS = 6 * 3_600_000;
/**
 * The least scrape stream max_age: a few scrape intervals, and a minute. An epoch's parts are
 * written over a whole gather and read back only when its commit marker is folded, after
 * the epochs before it; a max age near one interval drops parts the catalog has not read.
 */
const STREAM_AGE_MIN_INTERVALS = 3;
const STREAM_AGE_MIN_MS = 60_000;
/** Below this, scraper.stream.max-bytes is warned about: it holds a few epochs of a small system. */
const STREAM_BYTES_WARN = 10e6;
/**
 * DuckDB checkpoints a catalog when its WAL reaches this (DuckDB's own default is 16 MiB). A
 * checkpoint's cost grows with the catalog, not with the WAL: a medium system's after one
 * week took 0.6–1.9 s whether it held 3 epochs or 12, and at 16 MiB it came every third
 * epoch, costing the folds more than folding did (README: The catalog's checkpoints). What
 * is not checkpointed stays in DuckDB's memory, so the default is at most a quarter of
 * db.memory-limit, and not under DuckDB's own.
 */
export const DEFAULT_CHECKPOINT_BYTES = 128 * 1024 ** 2;
const LEAST_DEFAULT_CHECKPOINT_BYTES = 16 * 1024 ** 2;

/** db.checkpoint-threshold when not given, for a catalog of memory limit `memoryLimit`. */
export function defaultCheckpointBytes(memoryLimit: string): number {
  const limit = memoryLimitBytes(memoryLimit);
  if (limit === undefined) return DEFAULT_CHECKPOINT_BYTES;
  return Math.max(LEAST_DEFAULT_CHECKPOINT_BYTES, Math.min(DEFAULT_CHECKPOINT_BYTES, Math.floor(limit / 4)));
}

function scraper(top: RawScraper | undefined, own: RawScraper | undefined): ScraperConfig {
  const s = { ...top, ...own };
  const stream = { ...top?.stream, ...own?.stream };
  const intervalMs = s.interval ?? DEFAULT_INTERVAL_MS;
  return {
    intervalMs,
    quietMs: s.quiet ?? 300,
    timeoutMs: s.timeout ?? 5_000,
    disconnectBucketMs: s["disconnect-bucket"] ?? 60_000,
    disconnectHistoryMs: s["disconnect-history"] ?? 24 * 3_600_000,
    // 24h, or three scrapes when they are further apart than 8h.
    forgetAfterMs: s["forget-after"] ?? Math.max(24 * 3_600_000, FORGET_AFTER_MIN_INTERVALS * intervalMs),
    stream: {
      maxAgeMs: stream["max-age"] ?? DEFAULT_STREAM_MAX_AGE_MS,
      // No byte limit by default: nats-server reserves max_bytes in its JetStream storage and
      // refuses a stream whose max_bytes exceeds what is left there (max_file_store), so a
      // default bound would keep natsmon from starting on a small sink. Operators size it.
      maxBytes: stream["max-bytes"] ?? -1,
    },
  };
}

function db(top: RawDb | undefined, own: RawDb | undefined): DbConfig {
  const d = { ...top, ...own };
  const stream = { ...top?.["query-stream"], ...own?.["query-stream"] };
  const profile = { ...top?.["memory-profile"], ...own?.["memory-profile"] };
  return {
    retentionMs: d.retention ?? 768 * 3_600_000,
    memoryLimit: d["memory-limit"] ?? "1GB",
    checkpointThresholdBytes: d["checkpoint-threshold"] ?? defaultCheckpointBytes(d["memory-limit"] ?? "1GB"),
    threads: d.threads ?? 0,
    queryMaxRows: d["query-max-rows"] ?? 100_000,
    queryTimeoutMs: d["query-timeout"] ?? 30_000,
    queryStream: {
      maxRows: stream["max-rows"] ?? 1_000_000,
      window: stream.window ?? 8,
      compression: stream.compression ?? "none",
      ackTimeoutMs: stream["ack-timeout"] ?? 5_000,
    },
    memoryProfile: { enabled: profile.enabled ?? false, intervalMs: profile.interval ?? 2_000 },
  };
}

type View = Salvaged<RawConfig>;

/**
 * The checks made after the schema (system ids, check codes, endpoints), run on whatever
 * of the file passed the schema, so that one run reports every problem it can find.
 * `given` holds the top-level keys the file sets, valid or not.
 */
export function configIssues(
  view: View,
  given: ReadonlySet<string>,
  checks: CheckCatalogue | undefined,
  cores: number,
): { issues: ResolveIssue[]; warnings: ResolveIssue[] } {
  const issues: ResolveIssue[] = [];
  if (given.has("system") && given.has("systems")) {
    issues.push({ path: "systems", message: "give either system (one) or systems (a list), not both" });
  }
  const rawSystems: { raw: Salvaged<RawSystem> | undefined; path: string }[] = given.has("systems")
    ? (view.systems ?? []).map((s, i) => ({ raw: s, path: `systems[${i}]` }))
    : [{ raw: given.has("system") ? view.system : DEFAULT_SYSTEM, path: "system" }];
  if (checks) {
    issues.push(...checkSettingIssues("", view["disabled-checks"], view["check-thresholds"], checks));
    for (const { raw: s, path } of rawSystems) {
      issues.push(...checkSettingIssues(path, s?.["disabled-checks"], s?.["check-thresholds"], checks));
    }
  }
  for (const { raw: s, path } of rawSystems) {
    issues.push(...forgetAfterIssues(view.scraper, s?.scraper, path));
    issues.push(...streamAgeIssues(view.scraper, s?.scraper, path));
  }
  const seen = new Map<string, string>();
  for (const { raw: s, path } of rawSystems) {
    if (s?.id === undefined) continue;
    const first = seen.get(s.id);
    if (first) issues.push({ path: `${path}.id`, message: `"${s.id}" is already the id of ${first}` });
    else seen.set(s.id, path);
  }
  if (rawSystems.length > 1 && !view.node?.id) {
    issues.push({ path: "node.id", message: "is required when the node serves several systems" });
  }
  // Served systems are unknown when a system, or the list, is invalid itself.
  const listInvalid = given.has("systems") && view.systems === undefined;
  const ids = rawSystems.map(({ raw: s }) => s?.id);
  // Roles default to both. Roles the schema refused (empty, or a misspelt one) count as holding
  // the catalog: they are an error already, and an endpoint is not warned about a role the
  // file may well mean to give.
  const catalog = rawSystems.filter(({ raw: s }) => {
    const roles = s?.roles;
    return !roles || roles.length === 0 || roles.includes(undefined) || roles.includes("catalog");
  });
  const sides =
    listInvalid || ids.includes(undefined)
      ? undefined
      : { served: new Set(ids as string[]), catalog: new Set(catalog.map(({ raw: s }) => s!.id!)) };
  const endpoints = endpointIssues(view.notifications, sides, checks && new Set(checks.keys()));
  const threads = threadsWarnings(view.db, catalog, cores);
  const checkpoints = checkpointWarnings(view.db, catalog);
  const bytes = streamBytesWarnings(view.scraper, rawSystems);
  return {
    issues: [...issues, ...endpoints.issues],
    warnings: [...threads, ...checkpoints, ...bytes, ...authWarnings(view), ...endpoints.warnings],
  };
}

/**
 * A db.checkpoint-threshold given above half of db.memory-limit, once merged per system, named
 * where it is set: DuckDB holds what it has not checkpointed in its memory (measured: up to
 * three quarters of the WAL's size, 168 MiB more at 243 MiB of WAL than at 12 MiB), so such
 * a catalog runs its queries and folds in what is left, or spills to disk.
 * Allowed: the limit is the operator's to size. The default never warns (a quarter at most).
 */
function checkpointWarnings(top: View["db"], catalogSystems: readonly SystemView[]): ResolveIssue[] {
  return warnPerPath(catalogSystems, (s, path) => {
    const ownThreshold = s?.db?.["checkpoint-threshold"];
    const threshold = ownThreshold ?? top?.["checkpoint-threshold"];
    const ownLimit = s?.db?.["memory-limit"];
    const limit = ownLimit ?? top?.["memory-limit"] ?? "1GB";
    const limitBytes = memoryLimitBytes(limit);
    if (threshold === undefined || limitBytes === undefined || threshold <= limitBytes / 2) return undefined;
    return {
      path: settingPath(ownThreshold, path, "db.checkpoint-threshold"),
      message:
        `is more than half of ${settingPath(ownLimit, path, "db.memory-limit")} (${limit}): DuckDB holds ` +
        "what it has not checkpointed in its memory (up to about three quarters of the WAL), leaving the " +
        "catalog's queries and folds the rest; raise db.memory-limit or lower db.checkpoint-threshold",
    };
  });
}

/**
 * db.threads above the cores of the machine that loads the file, once merged per system and
 * named where it is set: allowed (the file may be checked on another machine than the one that
 * runs it) but a slip more often than not, since DuckDB starts every thread when the catalog
 * opens and those beyond the cores only wait for one. Only a system's catalog side opens DuckDB.
 */
function threadsWarnings(
  top: View["db"],
  catalogSystems: readonly SystemView[],
  cores: number,
): ResolveIssue[] {
  return warnPerPath(catalogSystems, (s, path) => {
    const own = s?.db?.threads;
    const threads = own ?? top?.threads;
    if (threads === undefined || threads <= cores) return undefined;
    return {
      path: settingPath(own, path, "db.threads"),
      message:
        `is ${threads}, more than the ${cores} cores of this machine: DuckDB starts every thread when ` +
        "the catalog opens, and those beyond the cores only wait for one; 0 gives a thread per core",
    };
  });
}

type SystemView = { raw: Salvaged<RawSystem> | undefined; path: string };

/**
 * The warnings `judge` finds in each system's merged settings, one per path: systems that
 * inherit a top-level value name its path alike, and are warned about once.
 */
function warnPerPath(
  systems: readonly SystemView[],
  judge: (system: Salvaged<RawSystem> | undefined, path: string) => ResolveIssue | undefined,
): ResolveIssue[] {
  const warnings = new Map<string, ResolveIssue>();
  for (const { raw, path } of systems) {
    const warning = judge(raw, path);
    if (warning) warnings.set(warning.path, warning);
  }
  return [...warnings.values()];
}

/** Where a merged setting is set: the system's own (`systems[0].db.threads`) or the top level's. */
function settingPath(own: unknown, systemPath: string, name: string): string {
  return own === undefined ? name : `${systemPath}.${name}`;
}

/**
 * scraper.forget-after, once merged with the system's own scraper settings: 0, or at least
 * a few scrape intervals, or a server that misses one scrape would be forgotten at once (its
 * findings resolved, scrape-001 never firing).
 */
function forgetAfterIssues(
  top: View["scraper"],
  own: Salvaged<RawScraper> | undefined,
  path: string,
): ResolveIssue[] {
  const forget = own?.["forget-after"] ?? top?.["forget-after"];
  const interval = own?.interval ?? top?.interval ?? DEFAULT_INTERVAL_MS;
  if (forget === undefined || forget === 0 || forget >= FORGET_AFTER_MIN_INTERVALS * interval) return [];
  const ownValue = own?.["forget-after"] !== undefined;
  return [
    {
      path: ownValue ? `${path}.scraper.forget-after` : "scraper.forget-after",
      message:
        `must be 0 (never forget) or at least ${FORGET_AFTER_MIN_INTERVALS} scrape intervals` +
        `${ownValue || own?.interval === undefined ? "" : ` of ${path}`} ` +
        `(${FORGET_AFTER_MIN_INTERVALS * interval} ms with scraper.interval ${interval} ms): a server that ` +
        "misses a scrape would be forgotten at once",
    },
  ];
}

/**
 * scraper.stream.max-age, once merged with the system's own scraper settings: at least a few
 * scrape intervals and a minute, or the stream drops an epoch's parts before the catalog
 * folds it (the epoch is then folded with those servers partial).
 */
function streamAgeIssues(
  top: View["scraper"],
  own: Salvaged<RawScraper> | undefined,
  path: string,
): ResolveIssue[] {
  const age = own?.stream?.["max-age"] ?? top?.stream?.["max-age"];
  const interval = own?.interval ?? top?.interval ?? DEFAULT_INTERVAL_MS;
  const least = Math.max(STREAM_AGE_MIN_MS, STREAM_AGE_MIN_INTERVALS * interval);
  if (age === undefined || age >= least) return [];
  const ownValue = own?.stream?.["max-age"] !== undefined;
  return [
    {
      path: ownValue ? `${path}.scraper.stream.max-age` : "scraper.stream.max-age",
      message:
        `must be at least 1m and ${STREAM_AGE_MIN_INTERVALS} scrape intervals` +
        `${ownValue || own?.interval === undefined ? "" : ` of ${path}`} (${least} ms with scraper.interval ` +
        `${interval} ms): the scrape stream would drop an epoch's parts before the catalog folds it`,
    },
  ];
}

/** A scraper.stream.max-bytes that holds only a few epochs, named where it is set. */
function streamBytesWarnings(top: View["scraper"], systems: readonly SystemView[]): ResolveIssue[] {
  return warnPerPath(systems, (s, path) => {
    const own = s?.scraper?.stream?.["max-bytes"];
    const bytes = own ?? top?.stream?.["max-bytes"];
    if (bytes === undefined || bytes < 0 || bytes >= STREAM_BYTES_WARN) return undefined;
    return {
      path: settingPath(own, path, "scraper.stream.max-bytes"),
      message:
        `is ${bytes} bytes, less than 10MB: at about 13 to 21 KB per server per scrape (measured on small ` +
        "servers) it holds minutes of scrapes, and a catalog that falls behind or restarts for longer finds " +
        "parts of its epochs dropped",
    };
  });
}

/** Turns the schema-checked file into the defaulted Config. */
export function buildConfig(raw: RawConfig, hostname: string): Config {
  const rawSystems = raw.systems ?? [raw.system ?? DEFAULT_SYSTEM];
  const systems: SystemConfig[] = rawSystems.map((s) => ({
    id: s.id,
    roles: s.roles ?? ["scrape", "catalog"],
    metadata: s.metadata ?? {},
    ...(s.nats ? { nats: s.nats } : {}),
    scraper: scraper(raw.scraper, s.scraper),
    db: db(raw.db, s.db),
    disabledChecks: s["disabled-checks"] ?? raw["disabled-checks"] ?? [],
    checkThresholds: { ...raw["check-thresholds"], ...s["check-thresholds"] },
  }));
  const nodeId = raw.node?.id ?? (systems.length === 1 ? systems[0]!.id : hostname);
  const sink = raw.sink ?? {};
  return {
    node: {
      id: nodeId,
      metadata: raw.node?.metadata ?? {},
      dataDir: raw.node?.["data-dir"] ?? "./data",
      ...(raw.node?.["metrics-listen"] !== undefined
        ? { metricsListen: parseListenAddress(raw.node["metrics-listen"]) }
        : {}),
      metricsNats: raw.node?.["metrics-nats"] ?? "all",
      ...(raw.node?.["metrics-token-file"] !== undefined
        ? { metricsTokenFile: raw.node["metrics-token-file"] }
        : {}),
      ...(raw.node?.["metrics-tls"]?.cert && raw.node["metrics-tls"].key
        ? {
            metricsTls: {
              cert: raw.node["metrics-tls"].cert,
              key: raw.node["metrics-tls"].key,
              ...(raw.node["metrics-tls"]["client-ca"]
                ? { clientCa: raw.node["metrics-tls"]["client-ca"] }
                : {}),
              checkMs: raw.node["metrics-tls"].check ?? 60_000,
            },
          }
        : {}),
    },
    sink: {
      ...(sink.url ? { url: sink.url } : {}),
      ...(sink.creds ? { creds: sink.creds } : {}),
      ...(sink.nkey ? { nkey: sink.nkey } : {}),
      ...(sink.user ? { user: sink.user } : {}),
      ...(sink.password ? { password: sink.password } : {}),
      ...(sink.token ? { token: sink.token } : {}),
      ...(sink.tls && Object.values(sink.tls).some(Boolean) ? { tls: sink.tls } : {}),
      replicas: sink.replicas ?? 1,
      embedded: {
        host: sink.embedded?.host ?? "127.0.0.1",
        port: sink.embedded?.port ?? 4222,
        ...(sink.embedded?.binary ? { binary: sink.embedded.binary } : {}),
      },
    },
    systems,
    web: raw.web?.["external-url"] ? { externalUrl: raw.web["external-url"] } : {},
    notifications: { endpoints: buildEndpoints(raw.notifications) },
    log: { level: raw.log?.level ?? "info" },
  };
}
