import type { Role } from "../domain/index.ts";
import type { ListenAddress } from "../lib/index.ts";

/**
 * The one validated, fully defaulted, frozen configuration (architecture.md §8).
 * Durations are milliseconds internally (`…Ms`); the wire converts to nanoseconds.
 */
export interface Config {
  readonly node: NodeConfig;
  readonly sink: SinkConfig;
  /** Every system this node serves (the single `system:` form becomes a list of one). */
  readonly systems: readonly SystemConfig[];
  readonly web: { readonly externalUrl?: string };
  readonly notifications: NotificationsConfig;
  readonly log: { readonly level: LogLevel };
}

export type LogLevel = "trace" | "debug" | "info" | "warn" | "error" | "fatal";

export interface NodeConfig {
  /** Resolved per spec: configured, else the served system's id, else the hostname. */
  readonly id: string;
  readonly metadata: Readonly<Record<string, string>>;
  readonly dataDir: string;
  /** Where the node serves its metrics over HTTP (GET /metrics); none when unset. */
  readonly metricsListen?: ListenAddress;
  /**
   * Which figures of the monitored systems GET /metrics serves beside the node's own: all
   * (servers, accounts, their links, streams, consumers), servers (all but streams and
   * consumers), off.
   */
  readonly metricsNats: "all" | "servers" | "off";
  /** A file holding the bearer token GET /metrics requires; none required when unset. */
  readonly metricsTokenFile?: string;
  /** GET /metrics over HTTPS with these files; plain HTTP when unset. */
  readonly metricsTls?: MetricsTls;
}

export interface MetricsTls {
  /** The certificate, its chain after it, PEM. */
  readonly cert: string;
  /** Its private key, PEM, unencrypted. */
  readonly key: string;
  /** The CA whose client certificates every connection must present; none asked for when unset. */
  readonly clientCa?: string;
  /** How often the files are checked for a renewed certificate. */
  readonly checkMs: number;
}

export interface NatsAuth {
  readonly creds?: string;
  /** A file holding the user's NKEY seed. */
  readonly nkey?: string;
  readonly user?: string;
  readonly password?: string;
  readonly token?: string;
  readonly tls?: TlsFiles;
}

/** PEM files for TLS towards NATS servers or a notification endpoint; cert and key come together. */
export interface TlsFiles {
  /** The CA that signed the servers' certificates, when the system's store does not hold it. */
  readonly ca?: string;
  /** A client certificate, for servers that verify clients. */
  readonly cert?: string;
  readonly key?: string;
}

export interface SinkConfig extends NatsAuth {
  /** Absent: natsmon starts its embedded nats-server. */
  readonly url?: string;
  /** Replicas of natsmon's own streams and buckets. */
  readonly replicas: number;
  readonly embedded: {
    readonly host: string;
    /** -1 lets the OS choose. */
    readonly port: number;
    /** nats-server binary; found on PATH (and /usr/sbin) when absent. */
    readonly binary?: string;
  };
}

export interface MonitoredNats extends NatsAuth {
  readonly url: string;
  /**
   * Application accounts whose micro services are discovered (`$SRV.*` lives in each
   * account and the system account cannot reach it: nats-monitoring §0.15). Each entry is
   * a user of that account on the same servers.
   */
  readonly accounts?: readonly MonitoredAccount[];
}

export interface MonitoredAccount extends NatsAuth {
  /** The account's name as the servers report it (its public key in operator mode). */
  readonly name: string;
}

export interface SystemConfig {
  readonly id: string;
  readonly roles: readonly Role[];
  readonly metadata: Readonly<Record<string, string>>;
  /** The monitored system through its system account; absent monitors the sink itself. */
  readonly nats?: MonitoredNats;
  readonly scraper: ScraperConfig;
  readonly db: DbConfig;
  readonly disabledChecks: readonly string[];
  readonly checkThresholds: Readonly<Record<string, Readonly<Record<string, number>>>>;
}

export interface ScraperConfig {
  readonly intervalMs: number;
  /** A gather ends after this long with no new reply. */
  readonly quietMs: number;
  /** …and in any case after this long. */
  readonly timeoutMs: number;
  /** Client disconnect advisories are counted in buckets this long… */
  readonly disconnectBucketMs: number;
  /** …and buckets are kept this long for `ops.disconnect.history`. */
  readonly disconnectHistoryMs: number;
  /** A server not heard from this long, and no JetStream meta peer, is no longer expected; 0 never forgets. */
  readonly forgetAfterMs: number;
  /** The limits of the system's scrape stream, applied by the node holding the scrape side. */
  readonly stream: ScrapeStreamLimits;
}

export interface ScrapeStreamLimits {
  /** max_age: a part or marker older than this is dropped, folded or not. */
  readonly maxAgeMs: number;
  /** max_bytes, with discard old: the oldest messages go first; -1 for no limit. */
  readonly maxBytes: number;
}

export interface DbConfig {
  /** 0 keeps everything. */
  readonly retentionMs: number;
  readonly memoryLimit: string;
  /** DuckDB's checkpoint_threshold: WAL bytes at which a commit checkpoints the catalog. */
  readonly checkpointThresholdBytes: number;
  /** 0: DuckDB's default (one per core). */
  readonly threads: number;
  readonly queryMaxRows: number;
  readonly queryTimeoutMs: number;
  readonly queryStream: {
    readonly maxRows: number;
    readonly window: number;
    readonly compression: "none" | "lz4" | "zstd";
    /** A full window with no ack advancing for this long means the client is gone: the scan is stopped. */
    readonly ackTimeoutMs: number;
  };
  readonly memoryProfile: { readonly enabled: boolean; readonly intervalMs: number };
}

export type AuthType = "basic" | "bearer" | "hmac";

export interface EndpointConfig {
  readonly type: "webhook" | "alertmanager";
  readonly name: string;
  readonly url: string;
  readonly enabled: boolean;
  readonly authType?: AuthType;
  readonly authUser?: string;
  readonly authToken?: string;
  readonly subscriptions: readonly string[];
  readonly ignore: readonly string[];
  readonly systems: readonly string[];
  /** For an https url: the CA that signed the receiver's certificate, a client certificate. */
  readonly tls?: TlsFiles;
  /** An HTTP proxy every request goes through (http://[user:password@]host:port). */
  readonly proxyUrl?: string;
  /** Headers sent with every request besides natsmon's own (a tenant id, an API key). */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface NotificationsConfig {
  readonly endpoints: readonly EndpointConfig[];
}
