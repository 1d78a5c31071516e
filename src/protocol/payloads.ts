/**
 * Wire payloads, snake_case exactly as the spec spells them. Internal code converts
 * to and from these at the edges only.
 */

/** `$MON.sys.<id>.feed.epoch` (spec: Epoch announcement). */
export interface EpochAnnouncement {
  node_id: string;
  epoch: string;
}

/** `ops.info` reply (spec: Instance info). */
export interface OpsInfoReply {
  geo: { enabled: boolean };
  realtime: { enabled: boolean };
  scraper: { interval: number };
  db: { retention: number };
  checks: { disabled?: string[] };
  license?: Record<string, unknown>;
}

/** One entry of `systems` in a discovery reply. */
export interface DiscoverySystem {
  id: string;
  roles: string[];
  metadata?: Record<string, string>;
  catalog_error?: string;
  /**
   * Roles configured for this system on this node that it does not serve because another
   * live node held them when it started (natsmon's addition to the spec's reply); omitted
   * when none. `roles` lists only the roles served.
   */
  refused?: RefusedRole[];
  /**
   * Why this node's scraper of the system does not scrape: why it cannot connect to the
   * monitored system (it keeps retrying), or the error its last epoch failed with (natsmon's
   * addition to the spec's reply); omitted while it scrapes.
   */
  scraper_error?: string;
}

/** A role a node left unserved: who holds it. */
export interface RefusedRole {
  role: string;
  held_by: { node_id: string; host?: string };
}

/** `$MON.ping` reply (spec: Discovery reply). */
export interface DiscoveryReply {
  node_id: string;
  version: string;
  capabilities: OpsInfoReply | Record<string, never>;
  systems: DiscoverySystem[];
  metadata?: Record<string, string>;
}

/** `db.query` request (spec: db.query). */
export interface QueryRequest {
  sql: string;
  params?: unknown[];
}

/** One reply (or chunk of a reply) in the scrape stream, listed by the commit marker. */
export interface ScrapePartRef {
  source: string;
  server: string;
  /** 1-based page of a paged reply (CONNZ); absent when the reply came whole. */
  page?: number;
  /** Stream sequences of the message chunks, in order; concatenated they are the reply body. */
  seqs: number[];
  bytes: number;
}

/**
 * The last message of an epoch in the scrape stream. The catalog folds an epoch only on
 * this marker, reading the parts it lists by sequence.
 */
export interface CommitMarker {
  system_id: string;
  epoch: string;
  finished_at: string;
  parts: ScrapePartRef[];
  servers_expected: string[];
  servers_answered: string[];
  /**
   * Servers that answered some requests and not others they serve (a reply later than the
   * quiet window, a request that timed out): their figures are incomplete this epoch, so
   * their findings are kept as they were. Absent in markers of older natsmon releases.
   */
  servers_partial?: string[];
  /**
   * Sources whose broadcast replies lacked servers that answered when asked again directly
   * (a reply later than the quiet window), and which: not partial, as they answered. Absent
   * when none was, and in markers of older natsmon releases.
   */
  asked_again?: { source: string; servers: string[] }[];
  /**
   * Each expected server that did not answer this epoch: since when its quiet counts toward
   * scraper.forget-after (its last answer, or when it became expected, moved on by any time
   * the scraper was not running), so a restarted scraper keeps counting. Absent when every
   * expected server answered, and in markers of older natsmon releases.
   */
  servers_unheard_since?: Record<string, string>;
  /**
   * Each JetStream meta group's peers (by group name) as last listed whole by its leader:
   * a restarted scraper keeps expecting a peer that is down. Absent without a clustered
   * JetStream, and in markers of older natsmon releases.
   */
  meta_peers?: Record<string, string[]>;
  /**
   * The scraper's scraper.interval, nanoseconds: the cadence ops.info reports on a node that
   * holds only the catalog, whose own configuration need not say it. Absent in markers of
   * older natsmon releases.
   */
  scrape_interval_ns?: number;
  /**
   * The marker's place in its writers' chain: one more than the marker before it in the scrape
   * stream, or 1 where the stream held none to follow (a new stream, or every marker aged out).
   * With prev_commit_seq, it lets the catalog count markers the stream dropped before it read
   * them (epochs never folded). Absent when the writer could not read the last marker, and in
   * markers of older natsmon releases.
   */
  commit_no?: number;
  /** Stream sequence of the marker written before this one, as its writer knew it; absent at a chain's start. */
  prev_commit_seq?: number;
  /** Epoch of the marker written before this one; present with prev_commit_seq. */
  prev_epoch?: string;
  /**
   * natsmon's own connections to the monitored system this epoch (the scrape connection and
   * each service-discovery connection), as the server each is on numbers it: the checks that
   * count an account's clients leave them out. Absent in markers of older natsmon releases.
   */
  own_connections?: OwnConnection[];
  /** Sources each server did not answer (no responders: too old for the request). */
  unsupported: { source: string; servers: string[] }[];
  errors: { source: string; error: string }[];
}

/**
 * One of natsmon's connections to a monitored server: the server's name and the client id it
 * gave the connection (its CONNZ `cid`), from the server's INFO; `account` when natsmon knows
 * it (a service-discovery connection's configured account; the scrape connection is in the
 * system account).
 */
export interface OwnConnection {
  server: string;
  cid: number;
  account?: string;
}

/** One `$SYS` reply on its way into the scrape stream: raw bytes, maybe gzip-encoded. */
export interface RawReply {
  source: string;
  server: string;
  page?: number;
  data: Uint8Array;
  encoding?: "gzip";
}

/** Per-source figures of the last epoch, in `ops.scraper.status`. */
export interface ScraperSourceStatus {
  source: string;
  /** Servers that answered (for `services`: service instances found in the configured accounts). */
  servers: number;
  /** Bytes received, as sent (compressed when gzip). */
  bytes: number;
  /** Milliseconds the gather took (quiet window included). */
  ms: number;
  /** Replies dropped as duplicates of a server already heard. */
  duplicates: number;
  /** No server answers this request (too old for it). */
  unsupported: boolean;
}

/** `ops.scraper.status` reply (natsmon's shape; the spec leaves it open). */
export interface ScraperStatusReply {
  system_id: string;
  state: "running" | "paused";
  /** Scrape cadence, nanoseconds (as in ops.info). */
  interval: number;
  last_epoch?: {
    epoch: string;
    parts: number;
    bytes: number;
    duration_ms: number;
    commit_seq: number;
    servers_expected: string[];
    servers_answered: string[];
    /** Servers that answered some requests of the epoch but not all (their findings are held). */
    servers_partial: string[];
    /** Expected servers that did not answer, and since when: forgotten after scraper.forget-after unless meta peers. */
    servers_unheard_since: Record<string, string>;
    /** Servers missing from a source's broadcast replies that answered when asked again directly (hx.epochs.asked_again). */
    asked_again: { source: string; servers: string[] }[];
    sources: ScraperSourceStatus[];
  };
  last_error?: string;
}

/** `ops.scraper.toggle` request: `{paused: true|false}`, or `{}` to flip. Reply: the status. */
export interface ScraperToggleRequest {
  paused?: boolean;
}

/** `ops.sink.info` reply: the layout and state of the system's scrape stream. */
export interface SinkInfoReply {
  stream: string;
  subjects: string[];
  replicas: number;
  storage: string;
  retention: string;
  /** Nanoseconds; 0 keeps messages for ever. */
  max_age: number;
  max_bytes: number;
  max_msgs: number;
  duplicate_window: number;
  state: { messages: number; bytes: number; first_seq: number; last_seq: number; consumer_count: number };
  cluster?: {
    name?: string;
    leader?: string;
    replicas: { name: string; current: boolean; offline: boolean }[];
  };
  /** Server version of the sink bus. */
  server_version: string;
}

/**
 * `ops.diagnostics.profilez` request: `{server, name?: allocs|block|goroutine|heap|mutex|
 * threadcreate|cpu (default heap), debug?: 0|1|2, duration?: "5s" (cpu needs it; 2.10.19+)}`.
 * `ops.diagnostics.expvarz` request: `{server}`. Reply of both: this, with `profile`
 * (base64 pprof bytes) or `data` (the server's expvars: memstats, cmdline).
 * Errors: 400 bad request, 404 no such server, 501 server too old (the description names
 * the version needed), 502 the server answered with an error, 504 it did not answer.
 */
export interface DiagnosticReply {
  server: string;
  server_id: string;
  version: string;
  name?: string;
  profile?: string;
  data?: unknown;
}

/** One group of a disconnect bucket: disconnects of one account, reason and server. */
export interface DisconnectGroup {
  account: string;
  /** The server's reason, as sent (e.g. "Client Closed", "Slow Consumer (Write Deadline)"). */
  reason: string;
  server: string;
  count: number;
  /** Totals over the disconnected connections' lifetimes, from the advisories. */
  sent_msgs: number;
  sent_bytes: number;
  received_msgs: number;
  received_bytes: number;
}

/**
 * A bucket of client disconnect advisories (`$SYS.ACCOUNT.*.DISCONNECT`), counted by the time
 * they arrived; published on `feed.disconnect` when it closes (only when it has any), and
 * kept for `ops.disconnect.history`. Groups are sorted by count, largest first; past
 * `MAX_DISCONNECT_GROUPS` the rest are summed into `other`.
 */
export interface DisconnectBucket {
  system_id: string;
  /** RFC 3339 start (inclusive) and end (exclusive). */
  start: string;
  end: string;
  total: number;
  groups: DisconnectGroup[];
  /** Disconnects in groups beyond the cap, when there were any. */
  other?: number;
}

export const MAX_DISCONNECT_GROUPS = 500;

/** `ops.disconnect.history` request: `{since?: RFC 3339, limit?: n}` (newest `limit` buckets). */
export interface DisconnectHistoryRequest {
  since?: string;
  limit?: number;
}

/** `ops.disconnect.history` reply: closed buckets oldest first, plus the one still counting. */
export interface DisconnectHistoryReply {
  system_id: string;
  bucket_seconds: number;
  /** How far back buckets are kept. */
  history_seconds: number;
  buckets: DisconnectBucket[];
  current: DisconnectBucket;
}
