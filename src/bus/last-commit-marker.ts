/**
 * Reading where a system's commit markers stand: the last marker written, for a scrape side's
 * start, and the consumer's progress, for a starved catalog (split from scrape-stream.ts).
 */
import type { NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager, type StoredMsg } from "@nats-io/jetstream";
import { systemAssets, systemSubjects, type CommitMarker } from "../protocol/index.ts";
import { passesByWaiting } from "./transient.ts";

/**
 * The last commit marker could not be read, for a reason other than the server's "no message
 * found": no answer in time (the stream's leader lost or frozen, an election under way), no
 * responders, or an error the server answered (a permission, a stream gone). A marker may well
 * be there, so this is never to be read as "no marker".
 */
export class CommitMarkerReadError extends Error {
  override readonly name = "CommitMarkerReadError";
  /** True when waiting explains the failure (a timeout, no leader); false for an error the server answered. */
  readonly transient: boolean;
  constructor(stream: string, cause: unknown, which = "the last commit marker") {
    const why = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
    super(`${which} in ${stream} could not be read from the sink (${why})`, { cause });
    this.transient = passesByWaiting(cause);
  }
}

/**
 * The last commit marker's message, from the stream's leader (STREAM.MSG.GET by subject);
 * null only for the server's "no message found" (10037, which nats.js returns as null).
 */
export async function lastCommitMessage(nc: NatsConnection, systemId: string): Promise<StoredMsg | null> {
  const stream = systemAssets(systemId).scrapeStream;
  try {
    const jsm = await jetstreamManager(nc);
    return await jsm.streams.getMessage(stream, { last_by_subj: systemSubjects(systemId).scrapeCommit });
  } catch (err) {
    throw new CommitMarkerReadError(stream, err);
  }
}

/**
 * The last commit marker in a system's scrape stream, or undefined when the stream holds none
 * (or holds one that is not JSON): a scrape side starting up takes its expected servers from
 * it, so a server that is down now still shows as missing. Rejects with a CommitMarkerReadError
 * when the sink does not say.
 */
export async function lastCommitMarker(
  nc: NatsConnection,
  systemId: string,
): Promise<CommitMarker | undefined> {
  const msg = await lastCommitMessage(nc, systemId);
  if (!msg) return undefined;
  try {
    return msg.json<CommitMarker>();
  } catch {
    return undefined;
  }
}

/**
 * Where a system's commit markers stand: the stream sequence of the last one written, of the
 * last one its catalog consumer handed out (to whichever process pulled it), and of the first
 * one written after `after` (the last marker the asking catalog got). A catalog that sees no
 * epoch reads them to tell a quiet scraper from markers that went elsewhere. Rejects (a
 * CommitMarkerReadError for a marker) when any cannot be read: a figure of 0 would say no
 * marker was ever written.
 */
export async function commitProgress(
  nc: NatsConnection,
  systemId: string,
  after = 0,
): Promise<{
  lastCommitSeq: number;
  deliveredSeq: number;
  nextCommitSeq: number;
  ackPending: number;
  ackWaitMs: number;
}> {
  const assets = systemAssets(systemId);
  const last = await lastCommitMessage(nc, systemId);
  const consumer = await (
    await jetstreamManager(nc)
  ).consumers.info(assets.scrapeStream, assets.catalogConsumer);
  const next = last && last.seq > after ? await nextCommitMessage(nc, systemId, after) : null;
  return {
    lastCommitSeq: last?.seq ?? 0,
    deliveredSeq: consumer.delivered.stream_seq,
    nextCommitSeq: next?.seq ?? 0,
    ackPending: consumer.num_ack_pending,
    ackWaitMs: Math.round((consumer.config.ack_wait ?? 30_000_000_000) / 1_000_000),
  };
}

/** The first commit marker's message after stream sequence `after`, or null when there is none. */
async function nextCommitMessage(
  nc: NatsConnection,
  systemId: string,
  after: number,
): Promise<StoredMsg | null> {
  const stream = systemAssets(systemId).scrapeStream;
  // STREAM.MSG.GET's next_by_subj (nats-server 2.9+): nats.js types getMessage without it.
  const query = { seq: after + 1, next_by_subj: systemSubjects(systemId).scrapeCommit };
  try {
    return await (await jetstreamManager(nc)).streams.getMessage(stream, query);
  } catch (err) {
    throw new CommitMarkerReadError(stream, err, `the first commit marker after ${after}`);
  }
}

/**
 * The commit marker at stream sequence `seq`, or undefined when the stream no longer holds it
 * (or holds something else there). Rejects with a CommitMarkerReadError when the sink does not say.
 */
export async function commitMarkerAt(
  nc: NatsConnection,
  systemId: string,
  seq: number,
): Promise<CommitMarker | undefined> {
  const stream = systemAssets(systemId).scrapeStream;
  let msg: StoredMsg | null;
  try {
    msg = await (await jetstreamManager(nc)).streams.getMessage(stream, { seq });
  } catch (err) {
    throw new CommitMarkerReadError(stream, err, `the commit marker at ${seq}`);
  }
  if (!msg || msg.subject !== systemSubjects(systemId).scrapeCommit) return undefined;
  try {
    return msg.json<CommitMarker>();
  } catch {
    return undefined;
  }
}
