import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { waitFor } from "./wait-for.ts";

/** One request as the receiver got it, recorded once its whole body has arrived. */
export interface ReceivedRequest {
  /** When the last byte of the body arrived. */
  readonly at: Date;
  readonly method: string;
  /** The request target as sent: path and query string, e.g. `/hook?x=1`. */
  readonly path: string;
  /** Header names in lower case; a repeated header's values joined with ", ". */
  readonly headers: Readonly<Record<string, string>>;
  /** The exact body bytes (a signature is computed over these). */
  readonly body: Buffer;
  /** The body as UTF-8 text. */
  text(): string;
  /** The body parsed as JSON; throws when it is not JSON. */
  json(): unknown;
  /** The status the receiver chose to answer with (set as soon as it is chosen). */
  readonly status: number | undefined;
}

/** How to answer one request. */
export interface ScriptedAnswer {
  readonly status: number;
  /** Answer this long after the body arrived; other requests are answered meanwhile. */
  readonly delayMs?: number;
  /** Default empty. */
  readonly body?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * Chooses the answer to a request; `n` is its index in `requests` (0 for the first request).
 * A responder that throws makes the receiver answer 500 with the error's message.
 */
export type Responder = (req: ReceivedRequest, n: number) => ScriptedAnswer;

export interface HttpReceiver extends AsyncDisposable {
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  readonly url: string;
  /** Every request, in arrival order. */
  readonly requests: readonly ReceivedRequest[];
  /** Answers every later request through `fn`. */
  respondWith(fn: Responder): void;
  /** Shorthand: answers every later request with `status` and an empty body. */
  setStatus(status: number): void;
  /** Resolves with the first `count` requests once that many have arrived (default 10 s). */
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  /** Calls `listener` for each request as soon as it is recorded, before it is answered. */
  onRequest(listener: (req: ReceivedRequest) => void): () => void;
}

/**
 * A real HTTP server on 127.0.0.1 and an OS-chosen port that records what notification
 * senders post. It answers 200 with an empty body until told otherwise. Disposing closes
 * every socket, including kept-alive ones and those waiting for a delayed answer.
 */
export async function startHttpReceiver(): Promise<HttpReceiver> {
  const requests: ReceivedRequest[] = [];
  const listeners = new Set<(req: ReceivedRequest) => void>();
  const delayed = new Set<NodeJS.Timeout>();
  let respond: Responder = () => ({ status: 200 });

  const answer = (res: ServerResponse, reply: ScriptedAnswer) => {
    if (res.destroyed) return;
    res.writeHead(reply.status, { ...reply.headers });
    res.end(reply.body ?? "");
  };

  const handle = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const received = record(req, body);
    const n = requests.push(received) - 1;
    for (const listener of listeners) listener(received);
    let reply: ScriptedAnswer;
    try {
      reply = respond(received, n);
    } catch (err) {
      reply = { status: 500, body: err instanceof Error ? err.message : String(err) };
    }
    received.status = reply.status;
    if (!reply.delayMs) return answer(res, reply);
    // A timer per request, not an awaited sleep, so a slow answer never holds up the next one.
    const timer = setTimeout(() => {
      delayed.delete(timer);
      answer(res, reply);
    }, reply.delayMs);
    delayed.add(timer);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => handle(req, res, Buffer.concat(chunks)));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    respondWith(fn) {
      respond = fn;
    },
    setStatus(status) {
      respond = () => ({ status });
    },
    async waitForRequests(count, timeoutMs = 10_000) {
      try {
        return await waitFor(() => requests.length >= count && requests.slice(0, count), {
          timeoutMs,
          intervalMs: 10,
        });
      } catch {
        throw new Error(
          `timed out waiting for ${count} request(s) at the HTTP receiver, got ${requests.length}`,
        );
      }
    },
    onRequest(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async [Symbol.asyncDispose]() {
      for (const timer of delayed) clearTimeout(timer);
      delayed.clear();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

function record(req: IncomingMessage, body: Buffer): ReceivedRequest & { status: number | undefined } {
  const headers: Record<string, string> = {};
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    headers[name] = name in headers ? `${headers[name]}, ${raw[i + 1]!}` : raw[i + 1]!;
  }
  return {
    at: new Date(),
    method: req.method ?? "",
    path: req.url ?? "",
    headers,
    body,
    text: () => body.toString("utf8"),
    json: () => JSON.parse(body.toString("utf8")) as unknown,
    status: undefined,
  };
}
