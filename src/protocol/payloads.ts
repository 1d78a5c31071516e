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
  /** Sources each server did not answer (no responders: too old for the request). */
  unsupported: { source: string; servers: string[] }[];
  errors: { source: string; error: string }[];
}

/** One `$SYS` reply on its way into the scrape stream: raw bytes, maybe gzip-encoded. */
export interface RawReply {
  source: string;
  server: string;
  data: Uint8Array;
  encoding?: "gzip";
}
