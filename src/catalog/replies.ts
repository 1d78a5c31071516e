/**
 * Reading the `$SYS` replies of an epoch: the `{server, data, error}` envelope
 * (nats-monitoring.md §2.2), grouped by source and server. Pure functions over parsed JSON.
 */

export type Json = Readonly<Record<string, unknown>>;

/** One `$SYS` reply of the epoch, parsed. */
export interface ScrapeReply {
  /** The scraper's source token: "varz" | "jsz" | "healthz" (more later). */
  readonly source: string;
  /** Name of the server that answered. */
  readonly server: string;
  /** Parsed JSON of the reply: the `{server, data, error?}` envelope. */
  readonly body: unknown;
}

/** A good reply: its data and the envelope's ServerInfo. */
export interface ServerReply {
  readonly data: Json;
  readonly info: Json;
}

/** Good replies by source, then by server name; plus what was wrong with the others. */
export interface EpochReplies {
  readonly bySource: ReadonlyMap<string, ReadonlyMap<string, ServerReply>>;
  readonly problems: readonly string[];
}

const EMPTY: ReadonlyMap<string, ServerReply> = new Map();

export function obj(value: unknown): Json {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : {};
}

export function arr(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}

export function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** A list of strings, the non-strings dropped. */
export function strings(value: unknown): string[] {
  return arr(value).filter((v): v is string => typeof v === "string");
}

export function isEmpty(value: unknown): boolean {
  return Object.keys(obj(value)).length === 0;
}

/**
 * Sorts the replies by source and server. A reply carrying an `error`, or without `data`,
 * is left out and described in `problems` (never fatal: the rest of the epoch still folds).
 * A second reply for the same source and server is a duplicate (§0.12) and is dropped.
 */
export function groupReplies(replies: readonly ScrapeReply[]): EpochReplies {
  const bySource = new Map<string, Map<string, ServerReply>>();
  const problems: string[] = [];
  for (const reply of replies) {
    const what = `${reply.source} from ${reply.server}`;
    const envelope = obj(reply.body);
    const error = envelope.error;
    if (error !== undefined && error !== null) {
      const e = obj(error);
      const code = typeof e.code === "number" ? e.code : "?";
      const description = str(e.description) ?? "no description";
      problems.push(`${what}: error ${code} ${description}`);
      continue;
    }
    if (typeof envelope.data !== "object" || envelope.data === null || Array.isArray(envelope.data)) {
      problems.push(`${what}: reply has no data object`);
      continue;
    }
    let servers = bySource.get(reply.source);
    if (!servers) bySource.set(reply.source, (servers = new Map<string, ServerReply>()));
    if (servers.has(reply.server)) {
      problems.push(`${what}: duplicate reply dropped`);
      continue;
    }
    servers.set(reply.server, { data: obj(envelope.data), info: obj(envelope.server) });
  }
  return { bySource, problems };
}

export function repliesOf(replies: EpochReplies, source: string): ReadonlyMap<string, ServerReply> {
  return replies.bySource.get(source) ?? EMPTY;
}
