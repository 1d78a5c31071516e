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
  /** 1-based page of a paged source (CONNZ, JSZ); absent when the reply came whole (page 1). */
  readonly page?: number;
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
 * The list each page of a paged source carries: pages 2..n of one server's reply are
 * concatenated onto page 1's list, in page order. `count`, when given, is set to the
 * merged list's length; `key` names an item, and an item a lower page already holds is
 * dropped (JSZ before 2.11.2 sends its first page in no order, so pages can overlap).
 * Every other field comes from page 1.
 */
interface PagedList {
  readonly list: string;
  readonly count?: string;
  readonly key?: string;
  /**
   * Pages 2..n are not more of the list but one item each, in detail, under this field of
   * their data (ACCOUNTZ's account_detail): they are gathered, in page order, into `details`,
   * each with its own page's `now` (when the detail lacks one), since page 1's is older:
   * whether an account's JWT had expired is judged by the time of its detail.
   */
  readonly detail?: { readonly field: string; readonly details: string };
}
const PAGED_LISTS: Readonly<Record<string, PagedList>> = {
  connz: { list: "connections", count: "num_connections" },
  // Newest first: a close that moved down a page while the pages were read comes twice.
  connz_closed: { list: "connections", count: "num_connections", key: "cid" },
  // `accounts` counts the server's JetStream accounts, not the page's: it stays as sent.
  jsz: { list: "account_details", key: "id" },
  // Page 1 lists the server's accounts, each later page is one of them in detail.
  accountz: { list: "accounts", detail: { field: "account_detail", details: "account_details" } },
};

interface Page {
  readonly page: number;
  readonly reply: ServerReply;
}

/**
 * Sorts the replies by source and server. A reply carrying an `error`, or without `data`,
 * is left out and described in `problems` (never fatal: the rest of the epoch still folds).
 * The pages of a paged source (CONNZ, JSZ) are merged into one reply per server; a second reply
 * for the same source, server and page is a duplicate (§0.12) and is dropped.
 */
export function groupReplies(replies: readonly ScrapeReply[]): EpochReplies {
  const pages = new Map<string, Map<string, Page[]>>();
  const problems: string[] = [];
  for (const reply of replies) {
    const page = reply.page ?? 1;
    const what = `${reply.source} from ${reply.server}${page > 1 ? ` page ${page}` : ""}`;
    const envelope = obj(reply.body);
    const error = envelope.error;
    if (error !== undefined && error !== null) {
      const e = obj(error);
      const code = typeof e.code === "number" ? e.code : "?";
      const description = str(e.description) ?? "no description";
      problems.push(`${what}: error ${code} ${description}`);
      continue;
    }
    // STATSZ is the one reply whose payload is under `statsz`, not `data` (§3.1).
    const data = envelope.data ?? envelope.statsz;
    if (typeof data !== "object" || data === null || Array.isArray(data)) {
      problems.push(`${what}: reply has no data object`);
      continue;
    }
    let servers = pages.get(reply.source);
    if (!servers) pages.set(reply.source, (servers = new Map<string, Page[]>()));
    let got = servers.get(reply.server);
    if (!got) servers.set(reply.server, (got = []));
    const list = PAGED_LISTS[reply.source];
    if (got.some((p) => p.page === page) || (page > 1 && list === undefined)) {
      problems.push(`${what}: duplicate reply dropped`);
      continue;
    }
    got.push({ page, reply: { data: obj(data), info: obj(envelope.server) } });
  }
  const bySource = new Map<string, Map<string, ServerReply>>();
  for (const [source, servers] of pages) {
    const merged = new Map<string, ServerReply>();
    for (const [server, got] of servers) merged.set(server, mergePages(got, PAGED_LISTS[source]));
    bySource.set(source, merged);
  }
  return { bySource, problems };
}

/** One reply from a server's pages: the lowest page's envelope, with every page's list. */
function mergePages(got: Page[], paged: PagedList | undefined): ServerReply {
  if (got.length === 1 || paged === undefined) return got[0]!.reply;
  const sorted = [...got].sort((a, b) => a.page - b.page);
  const first = sorted[0]!.reply;
  if (paged.detail !== undefined) {
    const { field, details } = paged.detail;
    const items = sorted
      .slice(1)
      .filter((p) => !isEmpty(p.reply.data[field]))
      .map((p) => {
        const now = p.reply.data.now;
        return now === undefined ? p.reply.data[field] : { now, ...obj(p.reply.data[field]) };
      });
    return { info: first.info, data: { ...first.data, [details]: items } };
  }
  let items = sorted.flatMap((p) => arr(p.reply.data[paged.list]));
  if (paged.key !== undefined) {
    const key = paged.key;
    const seen = new Set<unknown>();
    items = items.filter((item) => {
      const k = obj(item)[key];
      if (k === undefined) return true;
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    });
  }
  const count = paged.count === undefined ? {} : { [paged.count]: items.length };
  return { info: first.info, data: { ...first.data, [paged.list]: items, ...count } };
}

export function repliesOf(replies: EpochReplies, source: string): ReadonlyMap<string, ServerReply> {
  return replies.bySource.get(source) ?? EMPTY;
}

/** A JSON object as text with sorted keys (so an unchanged object compares equal); NULL when empty. */
export function jsonText(value: unknown): string | undefined {
  const o = obj(value);
  const keys = Object.keys(o).sort();
  if (keys.length === 0) return undefined;
  return JSON.stringify(Object.fromEntries(keys.map((k) => [k, o[k]])), (_k, v: unknown) =>
    typeof v === "bigint" ? v.toString() : v,
  );
}
