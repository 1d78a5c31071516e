import { createInbox, headers as natsHeaders, type Msg, type NatsConnection } from "@nats-io/nats-core";
import { gunzipSync } from "node:zlib";

/** One server's reply to a broadcast `$SYS` request. */
export interface GatheredReply {
  server: string;
  /** The bytes as received (gzip when `encoding` says so), kept for the scrape stream. */
  data: Uint8Array;
  encoding?: "gzip";
  /** The parsed envelope, for the server name and to spot error envelopes. */
  envelope: {
    server?: { name?: string; id?: string; ver?: string };
    error?: { code?: number; description?: string };
  };
}

export type GatherResult =
  | {
      kind: "replies";
      replies: GatheredReply[];
      duplicates: number;
      ms: number;
      /** Messages that came back at all, also ones not attributed to a responder: 0 means nothing answered. */
      received: number;
    }
  /** Nobody subscribes to the subject: every server is too old for this request. */
  | { kind: "unsupported"; ms: number };

export interface GatherOptions {
  /** The gather ends once no reply has come for this long… */
  quietMs: number;
  /** …or after this long in any case. */
  timeoutMs: number;
}

/** Names the responder of a parsed reply; replies are deduplicated by it. */
export type Identify = (parsed: unknown) => string | undefined;

/** `$SYS` replies are enveloped: the responder is `server.name`. */
const byServerName: Identify = (parsed) => {
  const name = (parsed as GatheredReply["envelope"] | null)?.server?.name;
  return typeof name === "string" && name !== "" ? name : undefined;
};

/**
 * Sends a request that every server answers and collects the replies until a quiet
 * window passes (nothing says how many replies to expect). Servers are told apart by
 * name, since ids change on restart; a duplicate (seen over two paths) is dropped.
 * Replies are requested gzip-compressed.
 */
export async function gather(
  nc: NatsConnection,
  subject: string,
  body: object,
  options: GatherOptions,
  identify: Identify = byServerName,
): Promise<GatherResult> {
  const started = performance.now();
  const inbox = createInbox();
  const sub = nc.subscribe(inbox);
  const byServer = new Map<string, GatheredReply>();
  let duplicates = 0;
  let received = 0;
  let unsupported = false;
  let quietTimer: NodeJS.Timeout | undefined;
  let ending: NodeJS.Immediate | undefined;
  let overdue = false;
  // Timers run before the event loop reads its sockets: when the process was busy (a fold,
  // a large parse) replies that came meanwhile are still waiting. They are read first (the
  // poll phase), and the gather ends after that (the check phase): past the overall timeout
  // in any case, on an expired quiet window only if none of them was for this gather.
  const endAfterPending = () => {
    const seen = received;
    clearImmediate(ending);
    ending = setImmediate(() => {
      if (overdue || received === seen) sub.unsubscribe();
    });
  };
  const overall = setTimeout(() => {
    overdue = true;
    endAfterPending();
  }, options.timeoutMs);
  const armQuiet = () => {
    clearTimeout(quietTimer);
    const due = performance.now() + options.quietMs;
    quietTimer = setTimeout(() => {
      // Fired far later than due: the event loop was held, and nothing could come in while
      // it was. That was no quiet: the window starts again now that replies can be read.
      if (performance.now() - due > Math.max(options.quietMs, LAG_MIN_MS)) armQuiet();
      else endAfterPending();
    }, options.quietMs);
  };
  try {
    const h = natsHeaders();
    h.set("Accept-Encoding", "gzip");
    nc.publish(subject, JSON.stringify(body), { reply: inbox, headers: h });
    for await (const msg of sub) {
      if (isNoResponders(msg)) {
        unsupported = byServer.size === 0;
        break;
      }
      received++;
      const reply = decode(msg, identify);
      armQuiet();
      if (reply === undefined) continue;
      if (byServer.has(reply.server)) duplicates++;
      else byServer.set(reply.server, reply);
    }
  } finally {
    clearTimeout(overall);
    clearTimeout(quietTimer);
    clearImmediate(ending);
    sub.unsubscribe();
  }
  const ms = performance.now() - started;
  if (unsupported) return { kind: "unsupported", ms };
  return { kind: "replies", replies: [...byServer.values()], duplicates, ms, received };
}

/**
 * A quiet timer firing later than due by more than its window (and at least this) says the
 * event loop was held, not that the servers were quiet.
 */
const LAG_MIN_MS = 50;

function isNoResponders(msg: Msg): boolean {
  return msg.data.length === 0 && msg.headers?.code === 503;
}

function decode(msg: Msg, identify: Identify): GatheredReply | undefined {
  const encoding = msg.headers?.get("Content-Encoding") === "gzip" ? "gzip" : undefined;
  try {
    const text = (encoding ? gunzipSync(msg.data) : Buffer.from(msg.data)).toString("utf8");
    const parsed = JSON.parse(text) as unknown;
    const server = identify(parsed);
    if (server === undefined) return undefined;
    const envelope =
      typeof parsed === "object" && parsed !== null ? (parsed as GatheredReply["envelope"]) : {};
    return { server, data: msg.data, ...(encoding ? { encoding } : {}), envelope };
  } catch {
    // A reply that is not JSON cannot be attributed to a server; it is dropped here and
    // the server shows as not answering this source.
    return undefined;
  }
}
