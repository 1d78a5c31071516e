import type { NatsConnection } from "@nats-io/nats-core";
import { systemSubjects, type DisconnectBucket } from "../protocol/index.ts";

/**
 * Broadcasts a closed disconnect bucket on the system's feed.disconnect subject: fire and
 * forget (spec: Broadcast feeds); `ops.disconnect.history` replays what a listener missed.
 */
export function publishDisconnectBucket(nc: NatsConnection, bucket: DisconnectBucket): void {
  nc.publish(systemSubjects(bucket.system_id).feedDisconnect, JSON.stringify(bucket));
}
