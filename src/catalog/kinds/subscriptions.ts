/**
 * Per-server sublist figures (SUBSZ) into hx.subscription_stats. The table belongs to no
 * entity kind (the sublist is the server's), so FoldContext does not append it:
 * appendSubscriptionStats does, after the kinds' rows, in the same transaction.
 */
import type { DuckDBConnection } from "@duckdb/node-api";
import type { FoldContext } from "../fold-context.ts";
import { repliesOf, str, type EpochReplies } from "../replies.ts";

const TABLE = "subscription_stats";

export function foldSubscriptionStats(
  ctx: FoldContext,
  replies: EpochReplies,
  serverPks: ReadonlyMap<string, number>,
): void {
  const buffer = ctx.buffer(TABLE);
  for (const [server, reply] of repliesOf(replies, "subsz")) {
    const d = reply.data;
    const what = `subsz from ${server}`;
    const serverPk =
      serverPks.get(server) ??
      ctx.pk("server", { name: server, cluster: str(reply.info.cluster) }, `server ${server}`);
    if (serverPk === undefined) continue;
    const row = {
      epoch: ctx.epoch,
      server_pk: serverPk,
      num_subscriptions: d.num_subscriptions,
      num_cache: d.num_cache,
      num_inserts: d.num_inserts,
      num_removes: d.num_removes,
      num_matches: d.num_matches,
      cache_hit_rate: d.cache_hit_rate,
      max_fanout: d.max_fanout,
      avg_fanout: d.avg_fanout,
    };
    const problem = (m: string) => ctx.problem(m);
    buffer.push(buffer.convert(row, what, problem), what, problem);
  }
  buffer.sortBy("server_pk");
}

/** Appends the epoch's hx.subscription_stats rows; returns how many. */
export function appendSubscriptionStats(ctx: FoldContext, con: DuckDBConnection): Promise<number> {
  return ctx.buffer(TABLE).appendTo(con);
}
