import type { NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager } from "@nats-io/jetstream";
import { systemAssets, type SinkInfoReply } from "../protocol/index.ts";

/** The scrape stream of a system as `ops.sink.info` reports it. */
export async function scrapeStreamInfo(nc: NatsConnection, systemId: string): Promise<SinkInfoReply> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(systemAssets(systemId).scrapeStream);
  const c = info.config;
  return {
    stream: c.name,
    subjects: c.subjects,
    replicas: c.num_replicas,
    storage: c.storage,
    retention: c.retention,
    max_age: c.max_age,
    max_bytes: c.max_bytes,
    max_msgs: c.max_msgs,
    duplicate_window: c.duplicate_window ?? 0,
    state: {
      messages: info.state.messages,
      bytes: info.state.bytes,
      first_seq: info.state.first_seq,
      last_seq: info.state.last_seq,
      consumer_count: info.state.consumer_count,
    },
    ...(info.cluster
      ? {
          cluster: {
            ...(info.cluster.name ? { name: info.cluster.name } : {}),
            ...(info.cluster.leader ? { leader: info.cluster.leader } : {}),
            replicas: (info.cluster.replicas ?? []).map((r) => ({
              name: r.name,
              current: r.current,
              offline: r.offline ?? false,
            })),
          },
        }
      : {}),
    server_version: nc.info?.version ?? "unknown",
  };
}
