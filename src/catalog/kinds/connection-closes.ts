/**
 * Closed client connections into hx.connection_closes. Each server keeps a ring of its
 * recently closed connections (10,000 by default) and lists it again at every scrape, so a
 * close is recorded only in the first epoch that sees it: not when an earlier epoch
 * recorded it, and not when it closed more than CLOSE_HORIZON_MS before this epoch (a close
 * from before natsmon watched, or one only seen after a long gap, would otherwise read as
 * news). The table belongs to no entity kind (the close is an event of a connection), so
 * FoldContext does not append it: appendConnectionCloses does, after the kinds' rows, in the
 * same transaction.
 */
import type { DuckDBConnection, DuckDBTimestampTZValue } from "@duckdb/node-api";
import type { FoldContext } from "../fold-context.ts";
import { arr, obj, repliesOf, str, type EpochReplies } from "../replies.ts";
import { parseRfc3339Micros } from "../values.ts";
import { connectionOpts } from "./connections.ts";

const TABLE = "connection_closes";

/**
 * A close first seen more than this long after it happened is not recorded. Five minutes
 * cover several missed scrapes and a server clock somewhat ahead of or behind natsmon's.
 */
export const CLOSE_HORIZON_MS = 5 * 60_000;

/**
 * The connections whose close an earlier epoch recorded and that a server can still list
 * as new enough to record: those recorded within the horizon and an hour's margin for
 * server clocks (a small, recent slice of the table).
 */
export async function recordedCloses(
  con: DuckDBConnection,
  epoch: DuckDBTimestampTZValue,
): Promise<ReadonlySet<number>> {
  const reader = await con.runAndReadAll(
    `SELECT DISTINCT connection_pk FROM hx.${TABLE}
     WHERE epoch >= $1::TIMESTAMPTZ - to_milliseconds(${CLOSE_HORIZON_MS + 3_600_000})`,
    [epoch],
  );
  return new Set(reader.getRowsJS().map(([pk]) => Number(pk)));
}

export function foldConnectionCloses(
  ctx: FoldContext,
  replies: EpochReplies,
  serverPks: ReadonlyMap<string, number>,
  recorded: ReadonlySet<number>,
): void {
  const buffer = ctx.buffer(TABLE);
  const horizon = ctx.epoch.micros - BigInt(CLOSE_HORIZON_MS) * 1000n;
  const seen = new Set<number>();
  const closed = repliesOf(replies, "connz_closed");
  for (const server of [...closed.keys()].sort()) {
    const reply = closed.get(server)!;
    const serverPk =
      serverPks.get(server) ??
      ctx.pk("server", { name: server, cluster: str(reply.info.cluster) }, `server ${server}`);
    for (const c of arr(reply.data.connections).map(obj)) {
      const what = `closed connection ${String(c.cid)} on ${server}`;
      const stop = typeof c.stop === "string" ? parseRfc3339Micros(c.stop) : undefined;
      if (c.cid === undefined || typeof c.start !== "string" || stop === undefined) {
        ctx.problem(`connz_closed from ${server}: a connection without cid, start or stop time; skipped`);
        continue;
      }
      if (stop < horizon) continue;
      const pk = ctx.pk("connection", { server_pk: serverPk, cid: c.cid, start: c.start }, what);
      // Closed before any scrape saw it open: what it was comes from its closed entry.
      if (ctx.created) ctx.opts("connection", pk, connectionOpts(c), what);
      if (recorded.has(pk) || seen.has(pk)) continue;
      seen.add(pk);
      const row = {
        epoch: ctx.epoch,
        connection_pk: pk,
        stop: c.stop,
        reason: c.reason,
        in_msgs: c.in_msgs,
        out_msgs: c.out_msgs,
        in_bytes: c.in_bytes,
        out_bytes: c.out_bytes,
        pending_bytes: c.pending_bytes,
        subscriptions: c.subscriptions,
      };
      buffer.push(buffer.convert(row, what, (m) => ctx.problem(m)));
    }
  }
  buffer.sortBy("connection_pk");
}

/** Appends the epoch's hx.connection_closes rows; returns how many. */
export function appendConnectionCloses(ctx: FoldContext, con: DuckDBConnection): Promise<number> {
  return ctx.buffer(TABLE).appendTo(con);
}
