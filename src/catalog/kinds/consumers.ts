/**
 * Rows of one consumer from its trusted JSZ `consumer_detail` entry (nats-monitoring.md
 * §3.3): configuration for hx.consumer_opts, state for hx.consumer_stats. Pure.
 */
import { arr, jsonText, obj, str, strings, type Json } from "../replies.ts";
import { replicaHealth } from "./streams.ts";

/** hx.consumer_opts values (without pk and epoch); undefined when the reply has no config. */
export function consumerOpts(detail: Json): Record<string, unknown> | undefined {
  if (detail.config === undefined) return undefined;
  const c = obj(detail.config);
  return {
    created: detail.created,
    description: c.description,
    durable: str(c.durable_name) !== undefined,
    deliver_policy: c.deliver_policy,
    opt_start_seq: c.opt_start_seq,
    opt_start_time: c.opt_start_time,
    ack_policy: c.ack_policy,
    ack_wait_ns: c.ack_wait,
    max_deliver: c.max_deliver,
    backoff_ns: c.backoff === undefined ? undefined : arr(c.backoff),
    filter_subject: c.filter_subject,
    filter_subjects: c.filter_subjects === undefined ? undefined : strings(c.filter_subjects),
    replay_policy: c.replay_policy,
    rate_limit_bps: c.rate_limit_bps,
    sample_freq: c.sample_freq,
    max_waiting: c.max_waiting,
    max_ack_pending: c.max_ack_pending,
    max_batch: c.max_batch,
    max_expires_ns: c.max_expires,
    max_bytes: c.max_bytes,
    inactive_threshold_ns: c.inactive_threshold,
    flow_control: c.flow_control ?? false,
    idle_heartbeat_ns: c.idle_heartbeat,
    headers_only: c.headers_only ?? false,
    deliver_subject: c.deliver_subject,
    deliver_group: c.deliver_group,
    replicas: c.num_replicas,
    mem_storage: c.mem_storage ?? false,
    metadata: jsonText(c.metadata),
    // omitempty: a consumer without a priority policy (none) and servers before 2.11 omit it.
    priority_policy: c.priority_policy,
  };
}

/** hx.consumer_stats values (without pk, epoch and leader). */
export function consumerStats(detail: Json): Record<string, unknown> {
  const delivered = obj(detail.delivered);
  const ackFloor = obj(detail.ack_floor);
  const cluster = obj(detail.cluster);
  const push = str(obj(detail.config).deliver_subject) !== undefined;
  return {
    cluster: cluster.name,
    delivered_consumer_seq: delivered.consumer_seq,
    delivered_stream_seq: delivered.stream_seq,
    last_active: delivered.last_active,
    ack_floor_consumer_seq: ackFloor.consumer_seq,
    ack_floor_stream_seq: ackFloor.stream_seq,
    ack_floor_last_active: ackFloor.last_active,
    num_ack_pending: detail.num_ack_pending,
    num_redelivered: detail.num_redelivered,
    num_waiting: detail.num_waiting,
    num_pending: detail.num_pending,
    // omitempty: absent means false for a push consumer; a pull consumer has no binding.
    push_bound: push ? (detail.push_bound ?? false) : undefined,
    ...replicaHealth(cluster),
  };
}
