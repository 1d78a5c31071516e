import type { NatsConnection } from "@nats-io/nats-core";
import { formatEpoch, type Epoch } from "../domain/index.ts";
import { systemSubjects, type EpochAnnouncement } from "../protocol/index.ts";

/**
 * Announces a committed epoch on the system's feed.epoch subject: fire and forget, no reply,
 * not stored (spec: Broadcast feeds). Published only after the epoch is visible in hx.
 */
export function publishEpoch(nc: NatsConnection, systemId: string, nodeId: string, epoch: Epoch): void {
  const payload: EpochAnnouncement = { node_id: nodeId, epoch: formatEpoch(epoch) };
  nc.publish(systemSubjects(systemId).feedEpoch, JSON.stringify(payload));
}
