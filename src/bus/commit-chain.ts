/**
 * The chain that links each commit marker to the one written before it (commit_no,
 * prev_commit_seq, prev_epoch), so the catalog can tell that the scrape stream dropped markers
 * it never read: a marker whose predecessor it was never handed. Split from scrape-stream.ts.
 */
import type { NatsConnection } from "@nats-io/nats-core";
import type { StoredMsg } from "@nats-io/jetstream";
import type { CommitMarker } from "../protocol/index.ts";
import { lastCommitMessage } from "./last-commit-marker.ts";

/** The chain fields of a marker about to be written. */
export type CommitLink = Pick<CommitMarker, "commit_no" | "prev_commit_seq" | "prev_epoch">;

/**
 * The last marker this writer stored (its sequence, number and epoch), learnt at the first
 * commit from the stream's last marker and then from each publish's ack. A publish that failed
 * may have been stored after all: the chain is then read from the stream again, so a marker
 * never names a predecessor that was not the last one written.
 */
export class CommitChain {
  readonly #nc: NatsConnection;
  readonly #systemId: string;
  #last: { seq: number; no: number; epoch: string } | null | undefined;
  constructor(nc: NatsConnection, systemId: string) {
    this.#nc = nc;
    this.#systemId = systemId;
  }

  /** The fields for the next marker; none when the stream's last marker could not be read. */
  async link(): Promise<CommitLink> {
    if (this.#last === undefined) {
      let msg;
      try {
        msg = await lastCommitMessage(this.#nc, this.#systemId);
      } catch {
        // Tried again at the next commit; this marker goes without, and nothing is judged by it.
        return {};
      }
      const marker = msg ? readMarker(msg) : undefined;
      // A last marker of an older release has no number: the chain starts over after it.
      this.#last = msg ? { seq: msg.seq, no: marker?.commit_no ?? 0, epoch: marker?.epoch ?? "" } : null;
    }
    if (this.#last === null) return { commit_no: 1 };
    const { seq, no, epoch } = this.#last;
    return { commit_no: no + 1, prev_commit_seq: seq, ...(epoch ? { prev_epoch: epoch } : {}) };
  }

  /** The marker was stored at `seq`. */
  wrote(seq: number, marker: CommitMarker): void {
    this.#last =
      marker.commit_no === undefined ? undefined : { seq, no: marker.commit_no, epoch: marker.epoch };
  }

  /** A publish failed: whether the stream stored it is not known. */
  forget(): void {
    this.#last = undefined;
  }
}

function readMarker(msg: StoredMsg): { commit_no?: number; epoch?: string } | undefined {
  let value: unknown;
  try {
    value = msg.json<unknown>();
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const { commit_no, epoch } = value as Record<string, unknown>;
  return {
    ...(typeof commit_no === "number" && Number.isSafeInteger(commit_no) && commit_no > 0
      ? { commit_no }
      : {}),
    ...(typeof epoch === "string" ? { epoch } : {}),
  };
}
