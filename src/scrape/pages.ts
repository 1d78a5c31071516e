import type { NatsConnection } from "@nats-io/nats-core";
import { gather, type GatheredReply } from "./gather.ts";
import { versionAtLeast, type Paging, type Source } from "./sources.ts";

type Data = Readonly<Record<string, unknown>>;

function dataOf(reply: GatheredReply | undefined): Data {
  const data = (reply?.envelope as { data?: unknown } | undefined)?.data;
  return typeof data === "object" && data !== null ? (data as Data) : {};
}

function itemsOf(reply: GatheredReply | undefined, paged: Paging): readonly unknown[] {
  const items = dataOf(reply)[paged.list];
  return Array.isArray(items) ? items : [];
}

function count(value: unknown): number {
  return typeof value === "number" ? value : typeof value === "bigint" ? Number(value) : 0;
}

/**
 * For a newest-first list: whether `page` reaches back past the cutoff (its last item is
 * older), so that no later page is needed. A page without readable times ends the paging.
 */
function reachesBack(page: GatheredReply, paged: Paging, cutoffMs: number): boolean {
  const last = itemsOf(page, paged).at(-1) as Record<string, unknown> | undefined;
  const time = last?.[paged.newestFirst!.field];
  const ms = typeof time === "string" ? Date.parse(time) : NaN;
  return !(ms >= cutoffMs);
}

/**
 * The rest of a paged reply (CONNZ, JSZ): asks the one server directly, by its id, for the
 * following pages until it has sent its total (or, for a newest-first list, until a page
 * reaches back far enough). A page that does not come is reported, and what was gathered
 * is kept.
 */
export async function fetchRemainingPages(
  nc: NatsConnection,
  source: Source,
  first: GatheredReply,
  window: { quietMs: number; timeoutMs: number; intervalMs?: number },
): Promise<{ pages: GatheredReply[]; error?: string }> {
  const paged = source.paged;
  const id = first.envelope.server?.id;
  if (!paged || !id) return { pages: [] };
  const data = dataOf(first);
  const total = count(data[paged.total]);
  const firstItems = itemsOf(first, paged);
  if (firstItems.length >= total) return { pages: [] };
  const recent = paged.newestFirst;
  // Measured on the server's clock: natsmon's may differ.
  const cutoffMs = recent
    ? (typeof data.now === "string" ? Date.parse(data.now) : Date.now()) -
      recent.recentMs(window.intervalMs ?? 0)
    : 0;
  if (recent && reachesBack(first, paged, cutoffMs)) return { pages: [] };
  const ask = async (body: object): Promise<GatheredReply | undefined> => {
    const result = await gather(
      nc,
      `$SYS.REQ.SERVER.${id}.${paged.directSuffix}`,
      body,
      // One server answers: no need to wait out a quiet window after it.
      { quietMs: 1, timeoutMs: window.timeoutMs },
    );
    return result.kind === "replies" ? result.replies[0] : undefined;
  };
  const unordered = paged.unorderedFirstPage;
  const shuffled =
    unordered !== undefined && !versionAtLeast(first.envelope.server?.ver ?? "0", unordered.before);
  // Offset 0 is never sorted there: the sorted pages are read from offset 1.
  let offset = shuffled ? 1 : count(data.offset) + firstItems.length;
  const pages: GatheredReply[] = [];
  while (offset < total) {
    if (recent && pages.length + 1 >= recent.maxPages) {
      return {
        pages,
        error:
          `${first.server}: ${source.name} has more recent items than ${recent.maxPages} pages of ` +
          `${paged.limit}; the older ones were not read`,
      };
    }
    const page = await ask({ ...source.body, offset, limit: paged.limit });
    if (!page) {
      return { pages, error: `${first.server}: ${source.name} page at offset ${offset} did not arrive` };
    }
    const n = itemsOf(page, paged).length;
    // Empty: the list has shrunk since the first page.
    if (n === 0) break;
    pages.push(page);
    offset += n;
    if (recent && reachesBack(page, paged, cutoffMs)) break;
  }
  if (!shuffled) return { pages };
  // The first item in sort order is only on an offset-0 page; unless the shuffled first
  // page happened to hold it, it is found by key.
  const keyOf = (item: unknown) => (item as Record<string, unknown> | null)?.[unordered.key];
  const keys = new Set([first, ...pages].flatMap((p) => itemsOf(p, paged).map(keyOf)));
  if (keys.size >= total) return { pages };
  const index = await ask(unordered.indexBody);
  if (!index) return { pages, error: `${first.server}: ${source.name} index of the pages did not arrive` };
  for (const key of itemsOf(index, paged).map(keyOf)) {
    if (typeof key !== "string" || keys.has(key)) continue;
    const page = await ask({ ...source.body, ...unordered.itemBody(key) });
    if (!page) return { pages, error: `${first.server}: ${source.name} page of ${key} did not arrive` };
    // Empty when the item went away since the index was read.
    if (itemsOf(page, paged).length > 0) pages.push(page);
  }
  return { pages };
}

/**
 * The details of a list source (ACCOUNTZ's accounts), each item asked of one server that
 * lists it, directly: not of every server, as an item's detail is mostly configuration that
 * every server holding it shares, and a system of a hundred servers with a thousand
 * accounts would otherwise send a hundred thousand replies an epoch. The server is chosen
 * among those listing the item by a hash of its name, so that the same server is asked
 * epoch after epoch while the item stays on it, and the requests spread over the servers;
 * when its reply does not come, or is an error, the next server listing the item is asked
 * (three servers at most), and a server that let a request time out is not asked again in
 * this scrape. Requests run
 * `details.concurrency` at a time. Returns each server's detail replies (in the order asked)
 * and what went wrong.
 */
export async function fetchDetails(
  nc: NatsConnection,
  source: Source,
  lists: readonly GatheredReply[],
  window: { timeoutMs: number },
): Promise<{ pages: Map<string, GatheredReply[]>; errors: string[] }> {
  const pages = new Map<string, GatheredReply[]>();
  const errors: string[] = [];
  const details = source.details;
  if (!details) return { pages, errors };
  const holders = new Map<string, GatheredReply[]>();
  for (const reply of [...lists].sort((a, b) => (a.server < b.server ? -1 : a.server > b.server ? 1 : 0))) {
    if (!reply.envelope.server?.id) continue;
    const listed = dataOf(reply)[details.list];
    const items = (Array.isArray(listed) ? listed : []).filter((v): v is string => typeof v === "string");
    for (const item of items) {
      let servers = holders.get(item);
      if (!servers) holders.set(item, (servers = []));
      servers.push(reply);
    }
  }
  const items = [...holders.keys()].sort();
  if (items.length > details.max) {
    errors.push(
      `the servers list ${items.length} ${details.list}; the details of the first ${details.max} by name were read`,
    );
  }
  const asked = items.slice(0, details.max);
  const missing: string[] = [];
  // Servers that let a request time out (stalled after answering the list): not asked again
  // in this scrape, or every account assigned to one would wait out the timeout.
  const stalled = new Set<string>();
  let next = 0;
  const worker = async () => {
    while (next < asked.length) {
      const item = asked[next++]!;
      const servers = holders.get(item)!;
      const start = hash(item) % servers.length;
      let got: GatheredReply | undefined;
      let refused: GatheredReply | undefined;
      let attempts = 0;
      for (let k = 0; k < servers.length && !got && attempts < DETAIL_ATTEMPTS; k++) {
        const server = servers[(start + k) % servers.length]!;
        if (stalled.has(server.server)) continue;
        attempts++;
        const result = await gather(
          nc,
          `$SYS.REQ.SERVER.${server.envelope.server!.id!}.${details.directSuffix}`,
          details.body(item),
          { quietMs: 1, timeoutMs: window.timeoutMs },
        );
        const reply = result.kind === "replies" ? result.replies[0] : undefined;
        if (result.kind === "replies" && !reply) stalled.add(server.server);
        // An error (the account left the server since its list): another holder may have it.
        else if (reply?.envelope.error) refused = reply;
        else got = reply;
      }
      // When every server asked refused, the refusal is kept: the catalog records why.
      got ??= refused;
      if (!got) missing.push(item);
      else pages.set(got.server, [...(pages.get(got.server) ?? []), got]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(details.concurrency, asked.length) }, worker));
  if (missing.length > 0) {
    const names = missing.sort().slice(0, 5).join(", ") + (missing.length > 5 ? ", …" : "");
    errors.push(`the details of ${missing.length} of the ${details.list} did not arrive (${names})`);
  }
  if (stalled.size > 0) {
    errors.push(
      `no detail came from ${[...stalled].sort().join(", ")} within scraper.timeout; not asked again`,
    );
  }
  return { pages, errors: errors.map((e) => `${source.name}: ${e}`) };
}

/** Servers asked for one item's detail at most. */
const DETAIL_ATTEMPTS = 3;

/** FNV-1a of a name: the same server for the same item, whatever the process. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
