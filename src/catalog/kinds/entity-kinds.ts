/**
 * The entity kinds the catalog keeps history for. Each kind has three tables,
 * hx.<kind>_ident (stable integer pk + identity, written once), hx.<kind>_opts (configuration,
 * written when it changes) and hx.<kind>_stats (per-epoch figures), and a natural key that
 * names an entity across epochs. A new kind adds an entry here, its migration and its fold.
 */
import { parseRfc3339Micros } from "../values.ts";

/** A natural key: text, or a number for a pair of small pks (pairKey). */
export type NaturalKey = string | number;

export interface EntityKind {
  /** The pk column, the same name in all three tables. */
  readonly pk: string;
  /** The natural key of an _ident row (as built by the fold, or as read back from the table). */
  readonly keyOf: (ident: Readonly<Record<string, unknown>>) => NaturalKey;
  /**
   * _stats columns the fold carries from an entity's previous row to its next
   * (FoldContext.carried), remembered in the key cache and loaded from the latest row.
   */
  readonly carried?: readonly string[];
}

/**
 * NUL cannot occur in NATS names, so joined keys never collide. Built by concatenation, not
 * map and join: the fold asks for a key for every entity it sees, a hundred thousand a
 * large epoch.
 */
function key(a: unknown, ...rest: unknown[]): string {
  let text = part(a);
  for (const p of rest) text += "\u0000" + part(p);
  return text;
}

/**
 * The key of an entity named by two pks (a replica: asset and server): one number when
 * both fit (no text to build and hash, and a replica is looked up for every server of
 * every stream and consumer each epoch), their joined text otherwise. Either way equal
 * pairs give equal keys, whether the pks come from the fold (numbers) or from the table.
 */
function pairKey(a: unknown, b: unknown): NaturalKey {
  const x = typeof a === "bigint" ? Number(a) : a;
  const y = typeof b === "bigint" ? Number(b) : b;
  if (
    typeof x === "number" &&
    typeof y === "number" &&
    Number.isInteger(x) &&
    Number.isInteger(y) &&
    x >= 0 &&
    y >= 0 &&
    x < PAIR_HIGH &&
    y < PAIR_LOW
  ) {
    return x * PAIR_LOW + y;
  }
  return key(a, b);
}

/** pairKey packs the asset pk above 2^21 server pks; the product stays below 2^53. */
const PAIR_LOW = 2 ** 21;
const PAIR_HIGH = 2 ** 31;

function part(p: unknown): string {
  return typeof p === "string" ? p : typeof p === "number" || typeof p === "bigint" ? String(p) : "";
}

/**
 * A point in time as whole milliseconds: the fold has the RFC 3339 text, the table gives a
 * Date back (milliseconds). A server cannot restart and hand out the same cid within one
 * millisecond, so the cut never merges two connections.
 */
function instant(value: unknown): string {
  if (value instanceof Date) return String(value.getTime());
  if (typeof value !== "string") return "";
  let ms = instants.get(value);
  if (ms === undefined) {
    const micros = parseRfc3339Micros(value);
    ms = micros === undefined ? "" : String(micros / 1000n - (micros % 1000n < 0n ? 1n : 0n));
    if (instants.size >= 200_000) instants.clear();
    instants.set(value, ms);
  }
  return ms;
}

/** instant() by text: every connection's start time is read again each epoch. */
const instants = new Map<string, string>();

export const ENTITY_KINDS = {
  // Servers are keyed by name: server ids change on every restart (nats-monitoring §0.9).
  server: { pk: "server_pk", keyOf: (ident) => key(ident.name) },
  // The JetStream domain is part of a stream's identity: a leaf with its own domain can hold
  // a stream with the same account and name as the hub, and they are different streams.
  stream: { pk: "stream_pk", keyOf: (ident) => key(ident.domain, ident.account, ident.name) },
  consumer: { pk: "consumer_pk", keyOf: (ident) => key(ident.stream_pk, ident.name) },
  // Links between servers (migration 0003-network.ts explains how the remote is named).
  route: {
    pk: "route_pk",
    keyOf: (ident) => key(ident.server_pk, ident.remote, ident.account, ident.pool_index),
  },
  gateway: {
    pk: "gateway_pk",
    keyOf: (ident) => key(ident.server_pk, ident.gateway, ident.direction, ident.remote_server),
    // When the link was last up, and to which server (migration 40).
    carried: ["last_connected_epoch", "last_remote_server"],
  },
  leafnode: { pk: "leafnode_pk", keyOf: (ident) => key(ident.server_pk, ident.account, ident.remote) },
  // An account's name is its public key in operator mode, its configured name otherwise.
  account: { pk: "account_pk", keyOf: (ident) => key(ident.name) },
  // An account's exports and imports (migration 0024); the exporter of an import is a name,
  // as it may be an account no server knows.
  account_export: {
    pk: "account_export_pk",
    keyOf: (ident) => key(ident.account_pk, ident.subject, ident.type),
  },
  account_import: {
    pk: "account_import_pk",
    keyOf: (ident) => key(ident.account_pk, ident.exporter, ident.subject, ident.local_subject, ident.type),
  },
  // cids are per server and start again when the server restarts.
  connection: {
    pk: "connection_pk",
    keyOf: (ident) => key(ident.server_pk, ident.cid, instant(ident.start)),
  },
  // Instances of a micro service are told apart by id, which is new on every start.
  service: { pk: "service_pk", keyOf: (ident) => key(ident.account, ident.name, ident.instance_id) },
  service_endpoint: { pk: "endpoint_pk", keyOf: (ident) => key(ident.service_pk, ident.name) },
  // A server's replica of a stream or consumer (migration 0005).
  stream_replica: { pk: "stream_replica_pk", keyOf: (ident) => pairKey(ident.stream_pk, ident.server_pk) },
  consumer_replica: {
    pk: "consumer_replica_pk",
    keyOf: (ident) => pairKey(ident.consumer_pk, ident.server_pk),
  },
  // Group names are unique within a meta group, and each JetStream domain has its own.
  raft_group: { pk: "raft_group_pk", keyOf: (ident) => key(ident.domain, ident.name) },
  meta: { pk: "meta_pk", keyOf: (ident) => key(ident.domain) },
} as const satisfies Record<string, EntityKind>;

export type KindName = keyof typeof ENTITY_KINDS;

export const KIND_NAMES = Object.keys(ENTITY_KINDS) as readonly KindName[];

export const identTable = (kind: KindName): string => `${kind}_ident`;
export const optsTable = (kind: KindName): string => `${kind}_opts`;
export const statsTable = (kind: KindName): string => `${kind}_stats`;
