import type { NatsConnection } from "@nats-io/nats-core";
import type { Logger } from "../lib/index.ts";
import { gather, type GatheredReply, type GatherResult } from "./gather.ts";
import { versionAtLeast, type Source } from "./sources.ts";

/** A server as this scrape can address it directly. */
export interface Responder {
  /** Its id (new at every start of nats-server): this epoch's when it answered anything. */
  readonly id: string;
  readonly ver?: string;
}

/** A source some servers' broadcast replies were missing from, and which of them answered when asked directly. */
export interface AskedAgain {
  readonly source: string;
  readonly servers: string[];
}

/** Direct requests in flight at once. */
const CONCURRENCY = 16;

/**
 * The longest a direct ask waits for its one reply (within what is left of scraper.timeout):
 * a late reply comes in well under it (a large JSZ came 50 to 290 ms after the others), and a
 * server that does not answer at all (frozen) then costs each epoch this long, not the whole
 * of scraper.timeout.
 */
export function askAgainWaitMs(quietMs: number): number {
  return Math.max(2_000, 4 * quietMs);
}

const BROADCAST = "$SYS.REQ.SERVER.PING.";

/**
 * Asks each expected server missing from a broadcast source's replies again, directly
 * (`$SYS.REQ.SERVER.<id>.<KIND>`), each ask for askAgainWaitMs at most, and none past
 * `deadlineMs` (performance.now): a reply that came
 * later than scraper.quiet (a large JSZ of a server holding thousands of consumers) or that
 * the quiet window cut off is asked for once more before its server counts as partial.
 * Replies that come are added to their source's result; returns which servers answered.
 * A server is addressed by the id of this epoch's replies, or, when it answered nothing
 * yet, by the id it last had (a server that restarted since, or is down, has no responder
 * under it, which answers at once). A request with no per-server form (account statistics)
 * is broadcast once more instead, when a server that answered this epoch is missing from it.
 */
export async function askMissingAgain(
  nc: NatsConnection,
  gathered: readonly { source: Source; result: GatherResult }[],
  expected: ReadonlySet<string>,
  responders: ReadonlyMap<string, Responder>,
  window: { deadlineMs: number; quietMs: number },
  log: Logger,
): Promise<AskedAgain[]> {
  const { deadlineMs } = window;
  const recovered = new Map<string, Set<string>>();
  const keep = (source: Source, replies: GatheredReply[], reply: GatheredReply) => {
    replies.push(reply);
    let servers = recovered.get(source.name);
    if (!servers) recovered.set(source.name, (servers = new Set()));
    servers.add(reply.server);
  };
  const asks: { source: Source; replies: GatheredReply[]; server: string; id: string }[] = [];
  for (const { source, result } of gathered) {
    // Nobody answers the broadcast (too old, or no system account): asking each is no better.
    if (result.kind !== "replies" || !source.subject.startsWith(BROADCAST)) continue;
    const replied = new Set(result.replies.map((r) => r.server));
    for (const server of [...expected].sort()) {
      const responder = responders.get(server);
      if (replied.has(server) || !responder) continue;
      // Too old for the request: its silence is no gap (serversTooOld reports it).
      if (source.since && !versionAtLeast(responder.ver ?? "0", source.since)) continue;
      asks.push({ source, replies: result.replies, server, id: responder.id });
    }
  }
  if (asks.length > 0 && deadlineMs - performance.now() >= 1) {
    log.info(
      { asks: asks.map((a) => `${a.source.name}: ${a.server}`) },
      "servers missing from broadcast replies (later than scraper.quiet?): asking each directly within scraper.timeout",
    );
  }
  let next = 0;
  const worker = async () => {
    while (next < asks.length) {
      const { source, replies, server, id } = asks[next++]!;
      const timeoutMs = Math.floor(Math.min(deadlineMs - performance.now(), askAgainWaitMs(window.quietMs)));
      if (timeoutMs < 1) return;
      const kind = source.subject.slice(BROADCAST.length);
      const result = await gather(nc, `$SYS.REQ.SERVER.${id}.${kind}`, source.body, {
        // One server answers: no need to wait out a quiet window after it.
        quietMs: 1,
        timeoutMs,
      });
      // Named as the server it was asked of: an id reused by another server is not taken for it.
      const reply = result.kind === "replies" ? result.replies.find((r) => r.server === server) : undefined;
      if (reply) keep(source, replies, reply);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, asks.length) }, worker));
  await broadcastAgain(nc, gathered, expected, responders, window, log, keep);
  return gathered
    .filter(({ source }) => recovered.has(source.name))
    .map(({ source }) => ({ source: source.name, servers: [...recovered.get(source.name)!].sort() }));
}

/**
 * The sources no server can be asked for directly, broadcast once more when a server that
 * answered this epoch (also when asked again) is missing from their replies; only the
 * missing servers' replies are taken. Servers that answered nothing are not waited for.
 */
async function broadcastAgain(
  nc: NatsConnection,
  gathered: readonly { source: Source; result: GatherResult }[],
  expected: ReadonlySet<string>,
  responders: ReadonlyMap<string, Responder>,
  window: { deadlineMs: number; quietMs: number },
  log: Logger,
  keep: (source: Source, replies: GatheredReply[], reply: GatheredReply) => void,
): Promise<void> {
  const present = new Set(
    gathered.flatMap(({ result }) => (result.kind === "replies" ? result.replies.map((r) => r.server) : [])),
  );
  await Promise.all(
    gathered.map(async ({ source, result }) => {
      if (result.kind !== "replies" || source.subject.startsWith(BROADCAST)) return;
      const replied = new Set(result.replies.map((r) => r.server));
      const missing = [...expected].filter(
        (server) =>
          present.has(server) &&
          !replied.has(server) &&
          !(source.since && !versionAtLeast(responders.get(server)?.ver ?? "0", source.since)),
      );
      const timeoutMs = Math.floor(window.deadlineMs - performance.now());
      if (missing.length === 0 || timeoutMs < 1) return;
      log.info({ source: source.name, servers: missing.sort() }, "asking again: a broadcast once more");
      const again = await gather(nc, source.subject, source.body, { quietMs: window.quietMs, timeoutMs });
      if (again.kind !== "replies") return;
      for (const reply of again.replies)
        if (missing.includes(reply.server)) keep(source, result.replies, reply);
    }),
  );
}

/**
 * Which expected servers a scrape asks again directly. Not one that answers account-scoped
 * requests only (a server of the bus answering CONNZ for the asking account, which serves
 * no per-server `$SYS` request: asking it costs each epoch askAgainWaitMs and brings
 * nothing). Nor one that answered nothing in the last epoch, even when asked directly, and
 * nothing yet in this one (frozen, or gone without a restart): it stays expected and
 * missing, and is asked again once it answers a broadcast.
 */
export class AskAgainTargets {
  /** Servers that answered in the last epoch only requests a non-system account is answered too. */
  private readonly accountScopedOnly = new Set<string>();
  /** Who answered anything in the last epoch; unknown before the first. */
  private heardLast: ReadonlySet<string> | undefined;

  /**
   * The servers to ask: `members` (this epoch's answers to system-wide requests so far) and
   * the `expected` ones still worth asking; `present` answered anything so far.
   */
  targets(
    expected: ReadonlySet<string>,
    members: ReadonlySet<string>,
    present: ReadonlySet<string>,
  ): Set<string> {
    const targets = new Set(members);
    for (const server of expected) {
      if (this.accountScopedOnly.has(server)) continue;
      if (this.heardLast && !this.heardLast.has(server) && !present.has(server)) continue;
      targets.add(server);
    }
    return targets;
  }

  /** The epoch's answers, asks included: `answered` anything, `members` system-wide requests. */
  epochEnded(answered: ReadonlySet<string>, members: ReadonlySet<string>): void {
    if (members.size > 0) {
      for (const server of answered) {
        if (members.has(server)) this.accountScopedOnly.delete(server);
        else this.accountScopedOnly.add(server);
      }
    }
    this.heardLast = answered;
  }
}

/** Each server's id and version in this epoch's replies, over those it had before. */
export function respondersOf(
  gathered: readonly { result: GatherResult }[],
  before: ReadonlyMap<string, Responder>,
): Map<string, Responder> {
  const responders = new Map(before);
  for (const { result } of gathered) {
    if (result.kind !== "replies") continue;
    for (const reply of result.replies) {
      const id = reply.envelope.server?.id;
      if (!id) continue;
      const ver = reply.envelope.server?.ver ?? responders.get(reply.server)?.ver;
      responders.set(reply.server, { id, ...(ver ? { ver } : {}) });
    }
  }
  return responders;
}
