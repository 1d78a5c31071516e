/**
 * Folding one epoch (architecture.md §3): all of its rows, plus its hx.epochs row, in one
 * DuckDB transaction on the write connection. Idempotent by epoch and by marker sequence.
 */
import { DuckDBTimestampTZValue, TIMESTAMPTZ, type DuckDBConnection } from "@duckdb/node-api";
import type { CommitMarker } from "../protocol/index.ts";
import { FoldContext } from "./fold-context.ts";
import { classifyFoldError, FoldDataError } from "./fold-errors.ts";
import { loadKeyCache } from "./key-cache.ts";
import { foldAccountLinks, gatherAccountDetails } from "./kinds/account-details.ts";
import { foldAccounts } from "./kinds/accounts.ts";
import { foldConnections } from "./kinds/connections.ts";
import { startIpsUpsert } from "./kinds/ips.ts";
import { foldJetStream } from "./kinds/jetstream.ts";
import { appendMetaGroupStats } from "./kinds/meta.ts";
import { gatherJszAssets } from "./kinds/jsz-assets.ts";
import { foldNetwork } from "./kinds/network.ts";
import { foldReplication } from "./kinds/replicas.ts";
import { foldServers } from "./kinds/servers.ts";
import { foldServices } from "./kinds/services.ts";
import { appendSubscriptionStats, foldSubscriptionStats } from "./kinds/subscriptions.ts";
import { appendConnectionCloses, closeHistory, foldConnectionCloses } from "./kinds/connection-closes.ts";
import type { Catalog, Writer } from "./open-catalog.ts";
import { groupReplies, repliesOf, type ScrapeReply } from "./replies.ts";
import { parseRfc3339Micros } from "./values.ts";
import { EPOCH_TEXT_FORMAT } from "./epoch-bound.ts";

export type { ScrapeReply } from "./replies.ts";

export interface EpochInput {
  /** Scrape-stream sequence of the commit marker. */
  readonly markerSeq: number;
  readonly marker: CommitMarker;
  readonly replies: readonly ScrapeReply[];
  /**
   * db.retention in ms (0 or absent: everything is kept), and the wall-clock time retention
   * measures from (default now): closes older than retention keeps are not recorded.
   */
  readonly retention?: { readonly retentionMs: number; readonly nowMs?: number };
}

/**
 * Where a fold's time went, in ms: `build` turns the replies into rows (the entity kinds,
 * keys, _opts comparison, value conversion), `fill` puts them into DataChunks, `append`
 * hands the chunks to the Appender (main.ips upsert included), `commit` is DuckDB's COMMIT.
 */
export interface FoldPhases {
  readonly build: number;
  readonly fill: number;
  readonly append: number;
  readonly commit: number;
}

export type FoldResult =
  | { readonly status: "folded"; readonly rows: number; readonly ms: number; readonly phases: FoldPhases }
  | { readonly status: "skipped"; readonly reason: "already-folded" };

/**
 * Folds one epoch. Skips it when hx.epochs already has its epoch or its marker sequence, so
 * a redelivered marker never counts twice. A reply that is an error or unreadable, or a
 * value that does not fit its column, is recorded in hx.epochs.errors and the rest folds.
 * An entity whose identity cannot be stored, or a row missing a required value, is left
 * out the same way. Throws (after ROLLBACK, with the key cache reloaded) when the
 * transaction fails: a FoldDataError when the epoch's own data caused it (fold-errors.ts),
 * which a retry cannot mend; anything else may pass, and the caller retries the marker.
 */
export function foldEpoch(catalog: Catalog, input: EpochInput): Promise<FoldResult> {
  const micros = parseRfc3339Micros(input.marker.epoch);
  if (micros === undefined) {
    return Promise.reject(
      new FoldDataError(`commit marker ${input.markerSeq}: epoch ${input.marker.epoch} is not RFC 3339`),
    );
  }
  return catalog
    .withWriter((writer) => fold(writer, input, new DuckDBTimestampTZValue(micros)))
    .catch((err: unknown) => {
      throw classifyFoldError(err);
    });
}

async function fold(writer: Writer, input: EpochInput, epoch: DuckDBTimestampTZValue): Promise<FoldResult> {
  const started = performance.now();
  const { con } = writer;
  await con.run("BEGIN TRANSACTION");
  try {
    const state = await foldState(con, epoch);
    if (state.folded) {
      await con.run("ROLLBACK");
      return { status: "skipped", reason: "already-folded" };
    }
    const closes = await closeHistory(con, epoch, {
      retentionMs: input.retention?.retentionMs ?? 0,
      nowMs: input.retention?.nowMs ?? Date.now(),
    });
    const building = performance.now();
    const ctx = new FoldContext(writer.tables, writer.keys, epoch);
    const replies = groupReplies(input.replies);
    const serverPks = foldServers(ctx, replies);
    const assets = gatherJszAssets(ctx, replies);
    foldJetStream(ctx, assets, serverPks);
    foldNetwork(ctx, replies, serverPks);
    foldReplication(ctx, replies, assets, serverPks);
    const connections = foldConnections(ctx, replies, serverPks);
    foldConnectionCloses(ctx, replies, serverPks, closes);
    const details = gatherAccountDetails(replies);
    foldAccounts(ctx, replies, serverPks, connections.accounts, assets, details);
    foldAccountLinks(ctx, replies, details, assets);
    foldSubscriptionStats(ctx, replies, serverPks);
    foldServices(ctx, replies);
    // main.ips needs nothing appended: DuckDB upserts it while this thread fills the chunks.
    const ips = await startIpsUpsert(con, epoch, connections);
    const filling = performance.now();
    let failed: Error | undefined;
    try {
      ctx.prepareAll();
    } catch (err) {
      failed = err instanceof Error ? err : new Error(String(err));
    }
    const appending = performance.now();
    // Settled before anything else runs on the connection, whatever happened here.
    await ips.done;
    if (failed) throw failed;
    const rows =
      (await ctx.appendAll(con)) +
      (await appendSubscriptionStats(ctx, con)) +
      (await appendConnectionCloses(ctx, con)) +
      (await appendMetaGroupStats(con, epoch));

    // The epoch row goes last: its presence is what marks the epoch as folded.
    const { marker } = input;
    const epochs = ctx.buffer("epochs");
    const errors = [
      ...marker.errors.map((e) => `${e.source}: ${e.error}`),
      ...replies.problems,
      ...ctx.problems,
    ];
    const row = {
      epoch,
      system_id: marker.system_id,
      finished_at: marker.finished_at,
      folded_at: new DuckDBTimestampTZValue(BigInt(Date.now()) * 1000n),
      marker_seq: foldOrder(BigInt(input.markerSeq), state.lastSeq),
      servers_expected: marker.servers_expected,
      servers_answered: marker.servers_answered,
      servers_partial: marker.servers_partial ?? [],
      parts: marker.parts.length,
      bytes: marker.parts.reduce((sum, p) => sum + p.bytes, 0),
      rows,
      fold_ms: performance.now() - started,
      errors,
      unsupported: marker.unsupported.map((u) => `${u.source}: ${u.servers.join(", ")}`),
      asked_again: (marker.asked_again ?? []).map((a) => `${a.source}: ${a.servers.join(", ")}`),
      service_accounts: [...repliesOf(replies, "services").keys()].sort(),
      commit_no: marker.commit_no,
      own_connections: marker.own_connections?.map((c) => JSON.stringify(c)),
    };
    // A marker field that does not fit (an unreadable finished_at, say) is recorded like any
    // other problem rather than failing the epoch for ever; a missing required one (a
    // system_id that is not text) leaves no epoch row to write, and fails the fold.
    const late: string[] = [];
    const what = `commit marker ${input.markerSeq}`;
    let values = epochs.convert(row, what, (m) => late.push(m));
    if (late.length > 0) values = epochs.convert({ ...row, errors: [...errors, ...late] }, "", () => {});
    const missing = epochs.missing(values);
    if (missing !== undefined) {
      const why = late.length > 0 ? late.join("; ") : `hx.epochs.${missing} has no value`;
      throw new FoldDataError(`the epoch cannot be recorded: ${why}`);
    }
    epochs.push(values, what, () => {});
    await epochs.appendTo(con);
    const committing = performance.now();
    await con.run("COMMIT");
    const committed = performance.now();
    // DuckDB answers COMMIT with success even when an earlier error had aborted the
    // transaction (it rolls back instead). Every error above throws before COMMIT, but the
    // fold does not take success on trust: the epoch row must be there.
    if (!(await foldState(con, epoch)).folded) {
      throw new Error(`commit marker ${input.markerSeq}: COMMIT reported success but the epoch is not there`);
    }
    ctx.publishKeys();
    const phases = {
      build: filling - building,
      fill: appending - filling,
      append: committing - appending,
      commit: committed - committing,
    };
    return { status: "folded", rows: rows + 1, ms: performance.now() - started, phases };
  } catch (err) {
    await con.run("ROLLBACK").catch(() => undefined);
    // The staged keys die with the fold (the committed cache was never touched). Reloading
    // also covers a COMMIT that landed before a later step failed, and heals a cache that
    // drifted from the file; if the reload fails too, the committed cache is still right.
    writer.keys = await loadKeyCache(con).catch(() => writer.keys);
    throw err;
  }
}

/**
 * Whether the epoch is folded (a marker delivered again, or a second marker of one epoch),
 * and the highest marker_seq folded so far. An epoch is known by its name: the scrape
 * stream's sequences start again at 1 when the stream is created again (a new sink, a
 * wiped embedded store, an operator's delete), so a sequence already folded can name a new
 * epoch.
 */
async function foldState(
  con: DuckDBConnection,
  epoch: DuckDBTimestampTZValue,
): Promise<{ folded: boolean; lastSeq: bigint }> {
  const found = await con.runAndReadAll(
    "SELECT EXISTS (SELECT 1 FROM hx.epochs WHERE epoch = $1), (SELECT coalesce(max(marker_seq), 0) FROM hx.epochs)",
    [epoch],
    [TIMESTAMPTZ],
  );
  const [folded, lastSeq] = found.getRows()[0] ?? [];
  return { folded: folded === true, lastSeq: typeof lastSeq === "bigint" ? lastSeq : 0n };
}

/**
 * hx.epochs.marker_seq orders folds (backups read it to find epochs folded after a point):
 * the marker's sequence, unless the stream was created again and its sequences restarted
 * below those folded, then one more than the highest folded.
 */
function foldOrder(markerSeq: bigint, lastSeq: bigint): bigint {
  return markerSeq > lastSeq ? markerSeq : lastSeq + 1n;
}

/**
 * The epoch folded from the commit marker at stream sequence `markerSeq` (or, without it, the
 * newest folded), with the marker's number in its chain (hx.epochs.commit_no); undefined when
 * no epoch of this file has that marker (set aside, folded by another catalog file, never folded).
 */
export async function foldedCommit(
  catalog: Catalog,
  markerSeq?: number,
): Promise<{ seq: number; epoch: string; commitNo: number | undefined } | undefined> {
  return catalog.withReader(async (con) => {
    const reader = await con.runAndReadAll(
      `SELECT marker_seq, strftime(epoch, '${EPOCH_TEXT_FORMAT}'), commit_no FROM hx.epochs
       WHERE $1::UBIGINT IS NULL OR marker_seq = $1::UBIGINT ORDER BY marker_seq DESC LIMIT 1`,
      [markerSeq === undefined ? null : String(markerSeq)],
    );
    const [seq, epoch, commitNo] = reader.getRowsJS()[0] ?? [];
    if (typeof epoch !== "string" || typeof seq !== "bigint") return undefined;
    return { seq: Number(seq), epoch, commitNo: typeof commitNo === "bigint" ? Number(commitNo) : undefined };
  });
}
