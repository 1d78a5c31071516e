/**
 * Reading `$SYS` reply envelopes into catalog rows. Pure functions over parsed JSON: field
 * names are those of nats-server 2.9+ (see shared/reference/nats-monitoring.md §3).
 */
type Json = Record<string, unknown>;

export function obj(value: unknown): Json {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : {};
}
export function arr(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
export function num(value: unknown): number | bigint | null {
  return typeof value === "number" || typeof value === "bigint" ? value : null;
}
export function str(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}
export function bool(value: unknown): boolean | null {
  return typeof value === "boolean" ? value : null;
}

/** `{server, data, error}`: the data of a good reply, or the error text of a bad one. */
export function unwrap(body: unknown): { data: Json } | { error: string } {
  const envelope = obj(body);
  const error = obj(envelope.error);
  if (Object.keys(error).length > 0) {
    const code = typeof error.code === "number" ? error.code : "?";
    const description = typeof error.description === "string" ? error.description : "error";
    return { error: `${code} ${description}` };
  }
  if (!("data" in envelope)) return { error: "reply has no data" };
  return { data: obj(envelope.data) };
}

export interface StreamSeen {
  account: string;
  detail: Json;
  /** The reporting server leads this stream (or it is not clustered): its state is trusted. */
  trusted: boolean;
}

/**
 * Streams in one server's JSZ reply. Only the leader's copy of a replicated stream is
 * trusted (followers report stale state); a stream with no cluster leader on a server
 * outside any meta group is a standalone server's own stream.
 */
export function streamsOf(jsz: Json, server: string): StreamSeen[] {
  const standalone = Object.keys(obj(jsz.meta_cluster)).length === 0;
  const out: StreamSeen[] = [];
  for (const account of arr(jsz.account_details)) {
    const a = obj(account);
    const name = str(a.name) ?? str(a.id) ?? "";
    for (const stream of arr(a.stream_detail)) {
      const detail = obj(stream);
      const leader = str(obj(detail.cluster).leader);
      out.push({ account: name, detail, trusted: leader === server || (leader === null && standalone) });
    }
  }
  return out;
}

/** Counts replicas the leader reports offline, and lagging or not current. */
export function replicaHealth(detail: Json): { offline: number; lagging: number } {
  let offline = 0;
  let lagging = 0;
  for (const replica of arr(obj(detail.cluster).replicas)) {
    const r = obj(replica);
    if (r.offline === true) offline++;
    else if (r.current === false || (num(r.lag) ?? 0) > 0) lagging++;
  }
  return { offline, lagging };
}
