import type { NatsConnection } from "@nats-io/nats-core";
import { gather, type GatheredReply } from "./gather.ts";
import type { Source } from "./sources.ts";

interface PageInfo {
  total?: number;
  offset?: number;
  num_connections?: number;
}

/**
 * The rest of a paged reply (CONNZ): asks the one server directly, by its id, for the
 * following pages until it has sent `total`. A page that does not come is reported, and
 * what was gathered is kept.
 */
export async function fetchRemainingPages(
  nc: NatsConnection,
  source: Source,
  first: GatheredReply,
  window: { quietMs: number; timeoutMs: number },
): Promise<{ pages: GatheredReply[]; error?: string }> {
  const paged = source.paged;
  const id = first.envelope.server?.id;
  if (!paged || !id) return { pages: [] };
  const info = (first.envelope as { data?: PageInfo }).data ?? {};
  const total = info.total ?? 0;
  let seen = (info.offset ?? 0) + (info.num_connections ?? 0);
  const pages: GatheredReply[] = [];
  while (seen < total) {
    const result = await gather(
      nc,
      `$SYS.REQ.SERVER.${id}.${paged.directSuffix}`,
      { ...source.body, offset: seen, limit: paged.limit },
      // One server answers: no need to wait out a quiet window after it.
      { quietMs: 1, timeoutMs: window.timeoutMs },
    );
    const page = result.kind === "replies" ? result.replies[0] : undefined;
    const count = ((page?.envelope as { data?: PageInfo } | undefined)?.data ?? {}).num_connections ?? 0;
    if (!page || count === 0) {
      return { pages, error: `${first.server}: ${source.name} page at offset ${seen} did not arrive` };
    }
    pages.push(page);
    seen += count;
  }
  return { pages };
}
