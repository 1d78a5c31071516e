/**
 * Rows of one stream from its trusted JSZ `stream_detail` entry (nats-monitoring.md §3.3):
 * configuration for hx.stream_opts, state for hx.stream_stats. Pure.
 */
import { arr, jsonText, obj, str, strings, type Json } from "../replies.ts";

/** hx.stream_opts values (without pk and epoch); undefined when the reply has no config. */
export function streamOpts(detail: Json): Record<string, unknown> | undefined {
  const c = detail.config;
  if (c === undefined) return undefined;
  const config = obj(c);
  const placement = obj(config.placement);
  return {
    created: detail.created,
    description: config.description,
    subjects: strings(config.subjects),
    retention: config.retention,
    storage: config.storage,
    replicas: config.num_replicas,
    max_consumers: config.max_consumers,
    max_msgs: config.max_msgs,
    max_bytes: config.max_bytes,
    max_age_ns: config.max_age,
    max_msgs_per_subject: config.max_msgs_per_subject,
    max_msg_size: config.max_msg_size,
    discard: config.discard,
    duplicate_window_ns: config.duplicate_window,
    no_ack: config.no_ack ?? false,
    // 2.9.0+, always sent there; absent before, stored as unknown (NULL) rather than false.
    allow_direct: config.allow_direct,
    mirror_direct: config.mirror_direct ?? false,
    sealed: config.sealed ?? false,
    deny_delete: config.deny_delete ?? false,
    deny_purge: config.deny_purge ?? false,
    allow_rollup_hdrs: config.allow_rollup_hdrs ?? false,
    placement_cluster: placement.cluster,
    placement_tags: strings(placement.tags),
    mirror: str(obj(config.mirror).name),
    sources: arr(config.sources).map((s) => str(obj(s).name) ?? ""),
    metadata: jsonText(config.metadata),
    // 2.10.0+, always sent there ("none" or "s2"); absent before.
    compression: config.compression,
  };
}

/** hx.stream_stats values (without pk, epoch and leader). */
export function streamStats(detail: Json): Record<string, unknown> {
  const state = obj(detail.state);
  const cluster = obj(detail.cluster);
  const mirror = detail.mirror === undefined ? undefined : obj(detail.mirror);
  const sources = arr(detail.sources).map(obj);
  return {
    cluster: cluster.name,
    messages: state.messages,
    bytes: state.bytes,
    first_seq: state.first_seq,
    first_ts: state.first_ts,
    last_seq: state.last_seq,
    last_ts: state.last_ts,
    // omitempty in the server: absent means none.
    num_subjects: state.num_subjects ?? 0,
    num_deleted: state.num_deleted ?? 0,
    lost_msgs: arr(obj(state.lost).msgs).length,
    consumer_count: state.consumer_count,
    ...replicaHealth(cluster),
    mirror_lag: mirror?.lag,
    mirror_active_ns: mirror?.active,
    mirror_error: mirror ? errorText(mirror.error) : undefined,
    sources_count: detail.sources === undefined ? undefined : sources.length,
    sources_max_lag: sources.length ? sources.reduce((m, s) => maxOf(m, s.lag), 0n) : undefined,
  };
}

/**
 * Replica health as the leader reports it. `current` stays true for an offline peer, so
 * `offline` (present only when true) is counted first (nats-monitoring.md §0.7).
 */
export function replicaHealth(cluster: Json): { replicas_offline: number; replicas_lagging: number } {
  let offline = 0;
  let lagging = 0;
  for (const replica of arr(cluster.replicas).map(obj)) {
    if (replica.offline === true) offline++;
    else if (replica.current === false || isPositive(replica.lag)) lagging++;
  }
  return { replicas_offline: offline, replicas_lagging: lagging };
}

function errorText(error: unknown): string | undefined {
  if (error === undefined || error === null) return undefined;
  const e = obj(error);
  return str(e.description) ?? str(error) ?? "error without description";
}

function isPositive(value: unknown): boolean {
  return (typeof value === "number" || typeof value === "bigint") && value > 0;
}

function maxOf(current: bigint, value: unknown): bigint {
  const n = typeof value === "bigint" ? value : typeof value === "number" ? BigInt(Math.trunc(value)) : 0n;
  return n > current ? n : current;
}
