/**
 * One request to a system's endpoint, for the client commands that print its reply (`natsmon
 * db`, `natsmon checks`): what went wrong is printed for a person (exit 1), and the reply
 * printed through the query's stdout writer.
 */
import { errors, headers as natsHeaders, type Msg, type NatsConnection } from "@nats-io/nats-core";
import { ServiceErrorHeader } from "../protocol/index.ts";
import { stringifyExact } from "../lib/index.ts";
import { fail } from "./client.ts";
import { noNodeServes } from "./discover.ts";
import { errorText } from "./query-fallback.ts";
import { openOutput } from "./query-output.ts";

export interface EndpointCall {
  /** The endpoint, as named in messages (`db.tables`). */
  readonly endpoint: string;
  readonly subject: string;
  readonly body: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * Sends one request; prints a micro error, a missing responder or a timeout and answers
 * undefined, or answers the reply.
 */
export async function requestEndpoint(
  nc: NatsConnection,
  system: string,
  call: EndpointCall,
  timeoutMs: number,
): Promise<Msg | undefined> {
  try {
    const h = natsHeaders();
    for (const [k, v] of Object.entries(call.headers ?? {})) h.set(k, v);
    const reply = await nc.request(call.subject, stringifyExact(call.body), {
      timeout: timeoutMs,
      headers: h,
    });
    const code = reply.headers?.get(ServiceErrorHeader.Code);
    if (code) {
      // In full: DuckDB's message spans lines (LINE 2: …, the caret) the header folds away.
      fail(`${code}: ${errorText(reply)}`);
      return undefined;
    }
    return reply;
  } catch (err) {
    if ((err as { isNoResponders?: () => boolean }).isNoResponders?.()) {
      fail(noNodeServes(system, `${call.endpoint} has no responder`));
      return undefined;
    }
    if (err instanceof errors.TimeoutError) {
      fail(
        `no answer to ${call.endpoint} from system "${system}" within ${timeoutMs} ms; ` +
          "the node may be busy or stopped: retry, or raise --timeout",
      );
      return undefined;
    }
    throw err;
  }
}

/**
 * Writes `text` to stdout through the query's writer: a reader that stops early (`| head`)
 * ends the output quietly rather than with an EPIPE stack trace.
 */
export async function printOut(text: string): Promise<void> {
  const output = openOutput(undefined);
  await output.write(text);
  await output.close();
}
