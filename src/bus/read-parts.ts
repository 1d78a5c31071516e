/**
 * Reading an epoch's parts back from the scrape stream, for the catalog side's fold
 * (split from scrape-stream.ts).
 */
import type { JetStreamManager } from "@nats-io/jetstream";
import { gunzipSync } from "node:zlib";
import type { ScrapePartRef } from "../protocol/index.ts";
import type { ScrapePart } from "./scrape-stream.ts";
import { passesByWaiting } from "./transient.ts";

/**
 * A part of an epoch the sink did not hand over, for a reason other than its not being in
 * the stream: no answer in time (the stream's leader lost or frozen, an election under way),
 * no responders, or an error the server answered. The part may well be there, so the epoch
 * is not folded without it; its marker is retried.
 */
export class PartReadError extends Error {
  override readonly name = "PartReadError";
  /** True when waiting explains the failure (a timeout, no leader); false for an error the server answered. */
  readonly transient: boolean;
  constructor(part: ScrapePartRef, seq: number, cause: unknown) {
    const why = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
    const where = `${part.source} from ${part.server}, seq ${seq}`;
    super(`a part of the epoch could not be read from the sink (${where}: ${why})`, { cause });
    this.transient = passesByWaiting(cause);
  }
}

/**
 * Reads each part by sequence from the stream's leader (STREAM.MSG.GET, not a direct get: a
 * direct get may be answered by a replica that has not stored the message yet, and its
 * "not found" would not mean the message is gone). Only the server's "no message found"
 * (10037, which nats.js returns as null) makes a part missing; any other failure rejects
 * with a PartReadError.
 */
export async function readParts(
  jsm: JetStreamManager,
  stream: string,
  parts: ScrapePartRef[],
): Promise<ScrapePart[]> {
  return Promise.all(
    parts.map(async (part): Promise<ScrapePart> => {
      const { source, server } = part;
      const named = { source, server, ...(part.page ? { page: part.page } : {}) };
      const chunks: Uint8Array[] = [];
      let encoding: string | undefined;
      for (const seq of part.seqs) {
        const msg = await jsm.streams.getMessage(stream, { seq }).catch((err: unknown) => {
          throw new PartReadError(part, seq, err);
        });
        // Aged out, purged or deleted: the server says it does not have it.
        if (msg === null)
          return { ...named, missing: `seq ${seq} is no longer in the stream`, dropped: true };
        encoding = msg.header.get("Content-Encoding") || undefined;
        chunks.push(msg.data);
      }
      const joined = Buffer.concat(chunks);
      try {
        const data = encoding === "gzip" ? gunzipSync(joined) : joined;
        return { ...named, text: data.toString("utf8") };
      } catch (err) {
        return { ...named, missing: `cannot decompress: ${(err as Error).message}`, dropped: false };
      }
    }),
  );
}
