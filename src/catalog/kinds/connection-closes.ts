/**
 * Closed client connections into hx.connection_closes. Each server keeps a ring of its
 * recently closed connections (10,000 by default) and lists it again at every scrape, so a
 * close is recorded only in the first epoch that sees it: not when an earlier epoch
 * recorded it, and not when it closed before the horizon (a close from before natsmon
 * watched would otherwise read as news). The table belongs to no entity kind (the close is an event of a connection), so
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
 * A close first seen more than this long after it happened is not recorded, unless the
 * epochs are further apart (a long scrape interval, a gap): then the time since the
 * previous epoch and a minute more, up to MAX_CLOSE_HORIZON_MS. Five minutes cover a few
 * missed scrapes. Measured on each server's own clock (CONNZ `now`), so a server clock ahead
 * of or behind natsmon's neither hides its closes nor reports them twice.
 */
export const CLOSE_HORIZON_MS = 5 * 60_000;
/** The longest horizon: closes from a longer gap than a day are not news. */
export const MAX_CLOSE_HORIZON_MS = 24 * 3_600_000;
/**
 * Kept between the horizon and db.retention's cutoff (at most half the retention): an
 * epoch's time is its scrape's start, seconds before the servers' `now` and the closes it lists.
 */
const RETENTION_MARGIN_MS = 60_000;

/** What the close fold needs to know of earlier epochs. */
export interface CloseHistory {
  /** How far back, before each server's `now`, a close is still news in this epoch. */
  readonly horizonMs: number;
  /** The connections whose close an earlier epoch recorded and that could be news again. */
  readonly recorded: ReadonlySet<number>;
}

/**
 * The horizon of this epoch (from the time since the previous epoch folded) and the closes
 * recorded within it and an hour's margin for scrape timing: a small, recent slice of the table.
 *
 * With db.retention on (`retentionMs` > 0), the horizon also ends before retention's cutoff
 * (`nowMs` - retention, and a margin): retention deletes the epochs that recorded older
 * closes, so a close from before it, listed again after a gap longer than the retention,
 * could not be told from news and would be recorded twice. A close that old is past what
 * the catalog keeps anyway.
 */
export async function closeHistory(
  con: DuckDBConnection,
  epoch: DuckDBTimestampTZValue,
  retention: { readonly retentionMs: number; readonly nowMs: number } = { retentionMs: 0, nowMs: 0 },
): Promise<CloseHistory> {
  const previous = await con.runAndReadAll(
    "SELECT epoch_ms($1::TIMESTAMPTZ) - epoch_ms(max(epoch)) FROM hx.epochs WHERE epoch < $1::TIMESTAMPTZ",
    [epoch],
  );
  const gapMs = Number(previous.getRowsJS()[0]?.[0] ?? 0);
  let horizonMs = Math.min(MAX_CLOSE_HORIZON_MS, Math.max(CLOSE_HORIZON_MS, gapMs + 60_000));
  if (retention.retentionMs > 0) {
    // Measured back from the epoch, as the horizon is; an epoch folded late (a backlog) has
    // less of the retention left.
    const epochMs = Number(epoch.micros / 1000n);
    const margin = Math.min(RETENTION_MARGIN_MS, retention.retentionMs / 2);
    const keptMs = retention.retentionMs - Math.max(0, retention.nowMs - epochMs) - margin;
    horizonMs = Math.max(0, Math.min(horizonMs, keptMs));
  }
  const reader = await con.runAndReadAll(
    `SELECT DISTINCT connection_pk FROM hx.${TABLE}
     WHERE epoch >= $1::TIMESTAMPTZ - to_milliseconds(${horizonMs + 3_600_000})`,
    [epoch],
  );
  return { horizonMs, recorded: new Set(reader.getRowsJS().map(([pk]) => Number(pk))) };
}

export function foldConnectionCloses(
  ctx: FoldContext,
  replies: EpochReplies,
  serverPks: ReadonlyMap<string, number>,
  history: CloseHistory,
): void {
  const buffer = ctx.buffer(TABLE);
  const seen = new Set<number>();
  const closed = repliesOf(replies, "connz_closed");
  for (const server of [...closed.keys()].sort()) {
    const reply = closed.get(server)!;
    const serverPk =
      serverPks.get(server) ??
      ctx.pk("server", { name: server, cluster: str(reply.info.cluster) }, `server ${server}`);
    if (serverPk === undefined) continue;
    const now = typeof reply.data.now === "string" ? parseRfc3339Micros(reply.data.now) : undefined;
    const horizon = (now ?? ctx.epoch.micros) - BigInt(history.horizonMs) * 1000n;
    for (const c of arr(reply.data.connections).map(obj)) {
      const what = `closed connection ${String(c.cid)} on ${server}`;
      const stop = typeof c.stop === "string" ? parseRfc3339Micros(c.stop) : undefined;
      if (c.cid === undefined || typeof c.start !== "string" || stop === undefined) {
        ctx.problem(`connz_closed from ${server}: a connection without cid, start or stop time; skipped`);
        continue;
      }
      if (stop < horizon) continue;
      const pk = ctx.pk("connection", { server_pk: serverPk, cid: c.cid, start: c.start }, what);
      if (pk === undefined) continue;
      // Closed before any scrape saw it open: what it was comes from its closed entry.
      if (ctx.created) ctx.opts("connection", pk, connectionOpts(c), what);
      if (history.recorded.has(pk) || seen.has(pk)) continue;
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
      const problem = (m: string) => ctx.problem(m);
      buffer.push(buffer.convert(row, what, problem), what, problem);
    }
  }
  buffer.sortBy("connection_pk");
}

/** Appends the epoch's hx.connection_closes rows; returns how many. */
export function appendConnectionCloses(ctx: FoldContext, con: DuckDBConnection): Promise<number> {
  return ctx.buffer(TABLE).appendTo(con);
}
