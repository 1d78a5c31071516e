/**
 * The in-band answer for a system nobody serves (spec: Errors: `db.query.stream` and
 * `db.backup.stream` report an unknown system as an error trailer on the reply inbox).
 *
 * A request to a subject nothing subscribes to gets only the bus's bare no-responders status,
 * so every node subscribes to the streamed subjects of every system, in one queue group
 * across nodes: besides the endpoint serving the system (if any), one node takes each
 * request. That node stays silent when the subject is served, by itself or by any `monitor`
 * service instance on the bus (`$SRV.INFO`, read until the first that lists it), and
 * otherwise sends a 503 error trailer, the status a missing responder has everywhere else.
 */
import type { Msg, NatsConnection, Subscription } from "@nats-io/nats-core";
import { Svcm } from "@nats-io/services";
import { ErrorCode, MonError } from "../domain/index.ts";
import type { Logger } from "../lib/index.ts";
import {
  anySystemSubject,
  SERVICE_NAME,
  STREAMED_SUFFIXES,
  systemIdOf,
  UNKNOWN_SYSTEM_QUEUE,
} from "../protocol/index.ts";
import { sendStreamError } from "./stream-sender.ts";

/**
 * How long the service instances on the bus have to list their endpoints. Only a request no
 * instance serves waits all of it: that is how long an unknown system takes to be told.
 */
export const SERVICE_INFO_WAIT_MS = 1000;

export function answerUnknownSystems(
  nc: NatsConnection,
  options: { servedHere: (subject: string) => boolean; log: Logger; waitMs?: number },
): Subscription[] {
  const { log } = options;
  const services = new Svcm(nc).client({
    strategy: "timer",
    maxWait: options.waitMs ?? SERVICE_INFO_WAIT_MS,
  });

  /** Whether a `monitor` instance on the bus (this one included) serves `subject`. */
  const servedOnBus = async (subject: string): Promise<boolean> => {
    for await (const info of await services.info(SERVICE_NAME)) {
      if (info.endpoints?.some((endpoint) => endpoint.subject === subject)) return true;
    }
    return false;
  };

  const answer = async (msg: Msg): Promise<void> => {
    if (!msg.reply || options.servedHere(msg.subject) || (await servedOnBus(msg.subject))) return;
    const system = systemIdOf(msg.subject) ?? msg.subject;
    log.info({ subject: msg.subject }, "request for a system no node serves; answered in-band with 503");
    sendStreamError(
      nc,
      msg.reply,
      new MonError(
        ErrorCode.Unavailable,
        `no node serves system "${system}": nothing on this bus answers ${msg.subject}, a mistyped ` +
          "system id or a stopped node; `natsmon systems` ($MON.ping) lists the systems served",
      ),
      log,
    );
  };

  return STREAMED_SUFFIXES.map((suffix) =>
    nc.subscribe(anySystemSubject(suffix), {
      queue: UNKNOWN_SYSTEM_QUEUE,
      callback: (err, msg) => {
        if (err) {
          log.error({ err, subject: anySystemSubject(suffix) }, "unknown-system subscription failed");
          return;
        }
        answer(msg).catch((error: unknown) =>
          log.warn({ err: error, subject: msg.subject }, "could not tell whether a system is served"),
        );
      },
    }),
  );
}
