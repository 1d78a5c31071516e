/**
 * Profiles too large for one reply on the bus (a heap snapshot of any node past a few MB, a
 * long CPU profile) go to the object store MON_PPROF on the sink, kept an hour, and ops.pprof
 * names the object instead of carrying the data: `nats object get MON_PPROF <name>` fetches it.
 */
import { nanos, type NatsConnection } from "@nats-io/nats-core";
import { StorageType } from "@nats-io/jetstream";
import { Objm } from "@nats-io/obj";

export const PPROF_BUCKET = "MON_PPROF";
/** How long a stored profile is kept: long enough to fetch, short enough not to fill the sink. */
const KEEP_MS = 3_600_000;

export interface StoredProfile {
  readonly bucket: string;
  readonly name: string;
  /** Bytes stored (the gzip-compressed profile). */
  readonly size: number;
}

/** Puts `gz` under `name` in MON_PPROF (made on first use, `replicas` as natsmon's other assets). */
export async function storeProfile(
  nc: NatsConnection,
  replicas: number,
  name: string,
  gz: Uint8Array,
): Promise<StoredProfile> {
  const store = await new Objm(nc).create(PPROF_BUCKET, {
    description: "natsmon ops.pprof profiles too large for one reply, gzip-compressed, kept an hour",
    ttl: nanos(KEEP_MS),
    storage: StorageType.File,
    replicas,
  });
  const info = await store.putBlob({ name }, gz);
  return { bucket: PPROF_BUCKET, name: info.name, size: info.size };
}
