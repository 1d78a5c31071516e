import { headers as natsHeaders, type NatsConnection } from "@nats-io/nats-core";
import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  type ConsumerInfo,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JetStreamPublishOptions,
  type JsMsg,
} from "@nats-io/jetstream";
import {
  ScrapeHeader,
  systemAssets,
  systemSubjects,
  type CommitMarker,
  type RawReply,
  type ScrapePartRef,
} from "../protocol/index.ts";
import { passesByWaiting } from "./transient.ts";
import { readParts } from "./read-parts.ts";
import { CommitChain } from "./commit-chain.ts";
import { handBack } from "./hand-back.ts";

/** Room left in each message for headers, below the server's max_payload. */
const HEADER_ROOM = 4096;

/** How an epoch's publishes ride out a stream without a leader. */
export interface PublishRetry {
  /** Retry a publish the stream did not take for this long before giving the epoch up. */
  readonly forMs: number;
  /** Stops retrying (the node is stopping): the publish fails at once. */
  readonly signal?: AbortSignal;
  /** Called once when publishes start being retried (not again until one succeeds), with why. */
  readonly onRetry?: (subject: string, cause: Error) => void;
  /**
   * Why the stream does not take messages when something more specific than a missing
   * leader is known (the embedded sink's disk full), for the message of an epoch given up.
   */
  readonly explain?: () => string | undefined;
}

const RETRY_DELAYS_MS = [100, 250, 500, 1000, 2000];

/**
 * Writes one epoch to the scrape stream: each reply (split into chunks when it exceeds
 * the server's max_payload), then the commit marker. Every message has a msg-id derived
 * from the epoch, so a retried publish after a reconnect is deduplicated by JetStream.
 */
export class ScrapePublisher {
  readonly #js: JetStreamClient;
  readonly #subjects: ReturnType<typeof systemSubjects>;
  readonly #maxChunk: number;
  readonly #retry: PublishRetry;
  /** A publish is being retried and none has succeeded since: onRetry was told. */
  #retrying = false;
  readonly #chain: CommitChain;
  constructor(nc: NatsConnection, systemId: string, retry: PublishRetry = { forMs: 0 }) {
    this.#js = jetstream(nc);
    this.#chain = new CommitChain(nc, systemId);
    this.#subjects = systemSubjects(systemId);
    this.#maxChunk = Math.max(1024, nc.info!.max_payload - HEADER_ROOM);
    this.#retry = retry;
  }

  /**
   * Publishes, retrying what a leader election explains (`passesByWaiting`) until `retry.forMs`
   * has gone by: the msg-id makes a message the stream did take after all a duplicate it
   * drops, so a retry never stores anything twice.
   */
  async #publish(subject: string, data: Uint8Array | string, options: Partial<JetStreamPublishOptions>) {
    const { forMs, signal, onRetry } = this.#retry;
    const started = Date.now();
    const giveUpAt = started + forMs;
    for (let attempt = 0; ; attempt++) {
      try {
        const ack = await this.#js.publish(subject, data, options);
        this.#retrying = false;
        return ack;
      } catch (err) {
        if (!passesByWaiting(err) || signal?.aborted || Date.now() >= giveUpAt) {
          if (attempt === 0 || !passesByWaiting(err)) throw err;
          const why =
            this.#retry.explain?.() ??
            "its JetStream servers are down or electing no leader; check them with `nats stream info`";
          throw new Error(
            `the scrape stream did not take ${subject} for ${Math.round((Date.now() - started) / 1000)} s ` +
              `(${(err as Error).message}): ${why} (this epoch is dropped, the next one is tried)`,
            { cause: err },
          );
        }
        if (!this.#retrying) onRetry?.(subject, err as Error);
        this.#retrying = true;
        const wait = Math.min(
          RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length - 1)]!,
          giveUpAt - Date.now(),
        );
        await new Promise<void>((resolve) => {
          if (signal?.aborted) return resolve();
          const timer = setTimeout(done, Math.max(0, wait));
          signal?.addEventListener("abort", done, { once: true });
          function done() {
            clearTimeout(timer);
            signal?.removeEventListener("abort", done);
            resolve();
          }
        });
      }
    }
  }

  async publishReply(epoch: string, reply: RawReply): Promise<ScrapePartRef> {
    const count = Math.max(1, Math.ceil(reply.data.byteLength / this.#maxChunk));
    const acks = [];
    for (let i = 0; i < count; i++) {
      const h = natsHeaders();
      h.set(ScrapeHeader.Epoch, epoch);
      h.set(ScrapeHeader.Source, reply.source);
      h.set(ScrapeHeader.Server, reply.server);
      h.set(ScrapeHeader.Chunk, `${i + 1}/${count}`);
      if (reply.encoding) h.set("Content-Encoding", reply.encoding);
      const chunk = reply.data.subarray(i * this.#maxChunk, (i + 1) * this.#maxChunk);
      acks.push(
        this.#publish(this.#subjects.scrapePart(reply.source), chunk, {
          headers: h,
          msgID: `${epoch}.${reply.source}.${reply.server}.${reply.page ?? 1}.${i + 1}`,
        }),
      );
    }
    const seqs = (await Promise.all(acks)).map((ack) => ack.seq);
    return {
      source: reply.source,
      server: reply.server,
      ...(reply.page ? { page: reply.page } : {}),
      seqs,
      bytes: reply.data.byteLength,
    };
  }

  /** Writes the marker, linked to the one written before it (CommitChain). */
  async publishCommit(marker: CommitMarker): Promise<number> {
    const linked = { ...marker, ...(await this.#chain.link()) };
    const h = natsHeaders();
    h.set(ScrapeHeader.Epoch, marker.epoch);
    const ack = await this.#publish(this.#subjects.scrapeCommit, JSON.stringify(linked), {
      headers: h,
      msgID: `${marker.epoch}.commit`,
    }).catch((err: unknown) => {
      this.#chain.forget();
      throw err;
    });
    this.#chain.wrote(ack.seq, linked);
    return ack.seq;
  }
}

/**
 * How long each pull of commit markers waits on the server. nats.js takes half of it as
 * the heartbeat interval and re-pulls after two missed heartbeats, so a consumer whose
 * leader was lost (a sink server down) is pulled again from its new leader within about
 * this long; at nats.js's default of 30 s the audit saw the catalog stand still for 44 s.
 */
const PULL_EXPIRES_MS = 5_000;

/** What the commit consumer's pull went through, for the catalog side's log. */
export interface CommitConsumerEvent {
  /**
   * unanswered: heartbeats missed or no responders (no leader); pulling: a pull was
   * answered again; consumer-gone, then consumer-made or consumer-failed: the durable was
   * missing and is made again, or could not be; stream-gone: the scrape stream is missing.
   */
  readonly kind:
    | "unanswered"
    | "pulling"
    | "consumer-gone"
    | "consumer-made"
    | "consumer-failed"
    | "stream-gone"
    /** A commit marker that is no marker (not JSON, no epoch or parts): terminated; detail is its seq. */
    | "marker-unreadable";
  readonly detail: string;
}

/** One listed reply, or why it can no longer be read (aged out of the stream, corrupt). */
export { PartReadError } from "./read-parts.ts";

/**
 * A part as read back: its text, or why it is missing; `dropped` when the stream no longer
 * holds it (its limits, max_age or max_bytes, or a purge took it), false when it is there but
 * unreadable.
 */
export type ScrapePart = { source: string; server: string; page?: number } & (
  { text: string } | { missing: string; dropped: boolean }
);

/** A commit marker handed to the catalog side, with its explicit ack handle. */
export interface CommitDelivery {
  readonly marker: CommitMarker;
  /** Stream sequence of the marker; the catalog stores it with the folded epoch. */
  readonly seq: number;
  /** When the sink's server stored the marker, by that server's clock (a third clock, for clock problems). */
  readonly storedAt: Date;
  readonly redelivered: boolean;
  /** How many times the server has handed this marker out, this time included (1 at first). */
  readonly deliveries: number;
  /** Commit markers waiting behind this one: more than 0 means the catalog is catching up. */
  readonly behind: number;
  /**
   * Reads the parts the marker lists, chunks joined and decompressed; a part the stream no
   * longer holds comes back missing. Rejects with a PartReadError when the sink does not hand
   * a part over (no answer, no leader): the epoch is then not to be folded yet.
   */
  readParts(): Promise<ScrapePart[]>;
  /** Tells the server the fold is still running, so the marker is not redelivered. */
  working(): void;
  ack(): Promise<void>;
  nak(delayMs: number): void;
  /**
   * Gives the marker back at once (a NAK without delay) and resolves once the server has read it,
   * so whoever pulls next gets it now, not after the ack wait; rejects when the server does
   * not answer within `timeoutMs` (the ack wait then redelivers it). Only once the pull has
   * stopped: a pull still open would be handed the marker again.
   */
  handBack(timeoutMs: number): Promise<void>;
  /** Never redeliver this marker. */
  term(): void;
}

/**
 * The catalog's durable consumer of commit markers. Parts are not consumed: they are read
 * by sequence when their marker arrives, so a crash before the ack simply redelivers the
 * marker and the fold runs again (and is skipped if it had committed).
 */
export async function consumeCommits(
  nc: NatsConnection,
  systemId: string,
  options: {
    ackWaitMs: number;
    /** What happens to the pull underneath: missed heartbeats, a consumer or stream gone. */
    onStatus?: (event: CommitConsumerEvent) => void;
  },
): Promise<{
  commits: AsyncIterable<CommitDelivery>;
  /** Stream sequence of the last marker acked (or terminated) before this pull began. */
  ackedThrough: number;
  stop(): Promise<void>;
}> {
  const jsm = await jetstreamManager(nc);
  const assets = systemAssets(systemId);
  const subjects = systemSubjects(systemId);
  const { ack_floor } = await ensureCommitConsumer(
    jsm,
    assets.scrapeStream,
    assets.catalogConsumer,
    subjects.scrapeCommit,
    options,
  );
  const consumer = await jetstream(nc).consumers.get(assets.scrapeStream, assets.catalogConsumer);
  const messages: ConsumerMessages = await consumer.consume({ max_messages: 8, expires: PULL_EXPIRES_MS });
  void (async () => {
    for await (const status of messages.status()) {
      const type = status.type;
      if (type === "heartbeats_missed" || type === "no_responders") {
        options.onStatus?.({ kind: "unanswered", detail: type });
      } else if (type === "consumer_not_found" || type === "consumer_deleted") {
        // Gone (an operator's delete, a sink whose store was lost): made again, from the
        // stream's start; an epoch already folded is known by its name and not folded again.
        options.onStatus?.({ kind: "consumer-gone", detail: type });
        await ensureCommitConsumer(
          jsm,
          assets.scrapeStream,
          assets.catalogConsumer,
          subjects.scrapeCommit,
          options,
        )
          .then(() => options.onStatus?.({ kind: "consumer-made", detail: assets.catalogConsumer }))
          .catch((err: unknown) => options.onStatus?.({ kind: "consumer-failed", detail: String(err) }));
      } else if (type === "stream_not_found") {
        options.onStatus?.({ kind: "stream-gone", detail: assets.scrapeStream });
      } else if (type === "next") {
        options.onStatus?.({ kind: "pulling", detail: "" });
      }
      // Heartbeats, resets, flow control, pinning: routine, or not used by this consumer.
    }
  })();
  let iterated = false;
  async function* deliveries(): AsyncGenerator<CommitDelivery> {
    iterated = true;
    for await (const m of messages) {
      const delivery = toDelivery(nc, jsm, assets.scrapeStream, assets.catalogConsumer, m);
      // A marker nobody can read would come back for ever and hold up every later epoch.
      if (delivery) {
        yield delivery;
        continue;
      }
      // No reason text: `+TERM <reason>` is not understood by nats-server 2.9, which
      // would leave the marker pending.
      m.term();
      options.onStatus?.({ kind: "marker-unreadable", detail: String(m.seq) });
    }
  }
  return {
    commits: deliveries(),
    ackedThrough: ack_floor.stream_seq,
    stop: async () => {
      // close() resolves once the iteration has run the stop it queues: never, when nobody
      // iterates (a catalog side stopped before its loop began). stop() alone ends the pull.
      if (!iterated) return messages.stop();
      await messages.close();
    },
  };
}

async function ensureCommitConsumer(
  jsm: JetStreamManager,
  stream: string,
  durable: string,
  filter: string,
  options: { ackWaitMs: number },
): Promise<ConsumerInfo> {
  const config = {
    durable_name: durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    filter_subject: filter,
    ack_wait: options.ackWaitMs * 1_000_000,
    // Epochs are folded strictly in order, one at a time.
    max_ack_pending: 1,
    max_deliver: -1,
  };
  try {
    await jsm.consumers.info(stream, durable);
    return await jsm.consumers.update(stream, durable, { ack_wait: config.ack_wait, max_ack_pending: 1 });
  } catch {
    return await jsm.consumers.add(stream, config);
  }
}

function toDelivery(
  nc: NatsConnection,
  jsm: JetStreamManager,
  stream: string,
  durable: string,
  m: JsMsg,
): CommitDelivery | undefined {
  let marker: CommitMarker;
  try {
    marker = m.json<CommitMarker>();
  } catch {
    return undefined;
  }
  if (typeof marker.epoch !== "string" || !Array.isArray(marker.parts)) return undefined;
  return {
    marker,
    seq: m.seq,
    storedAt: m.time,
    redelivered: m.redelivered,
    deliveries: m.info.deliveryCount,
    behind: m.info.pending,
    readParts: () => readParts(jsm, stream, marker.parts),
    working: () => m.working(),
    ack: async () => {
      await m.ackAck();
    },
    nak: (delayMs) => m.nak(delayMs),
    handBack: (timeoutMs) => handBack(nc, jsm, stream, durable, m, timeoutMs),
    term: () => m.term(),
  };
}
