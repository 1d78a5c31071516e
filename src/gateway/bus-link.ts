import type { NatsConnection } from "@nats-io/nats-core";
import type { Logger } from "../lib/index.ts";

export type BusState = "connected" | "disconnected" | "closed";

/** The gateway's view of its one bus connection, kept from the client's status events. */
export interface BusLink {
  readonly nc: NatsConnection;
  state(): BusState;
  /**
   * Aborts when the connection drops (or at once when it is down): a request in flight on
   * it gets no answer, whatever its timeout.
   */
  dropped(): AbortSignal;
  /** The bus's round trip in ms, or undefined when no answer came within `timeoutMs`. */
  roundTrip(timeoutMs: number): Promise<number | undefined>;
  /** Resolves with the reason when the connection closes for good without close() being called. */
  readonly lost: Promise<Error>;
  /** Ends the connection: drained when connected (in-flight replies still arrive), else closed. */
  close(drainTimeoutMs: number): Promise<void>;
}

/**
 * Follows the connection's status so that requests fail fast with 502 while the bus is
 * away, instead of waiting in the client's reconnect buffer for the full request timeout,
 * and so that `GET /healthz` can say whether the bus is reachable.
 */
export function watchBus(nc: NatsConnection, log: Logger): BusLink {
  let connected = true;
  let drop = new AbortController();
  const watching = (async () => {
    for await (const status of nc.status()) {
      // Closing is read from the connection itself; the other events do not change reachability.
      if (status.type === "disconnect") {
        connected = false;
        drop.abort();
        log.warn({ server: status.server }, "bus connection lost; reconnecting");
      } else if (status.type === "reconnect") {
        connected = true;
        drop = new AbortController();
        log.info({ server: status.server }, "bus connection restored");
      } else if (status.type === "error") {
        log.warn({ err: status.error }, "bus server reported an error");
      }
    }
  })();
  let closing = false;
  const lost = nc.closed().then((err) => {
    drop.abort();
    return err ?? new Error("the bus connection closed");
  });
  const state = (): BusState => (nc.isClosed() ? "closed" : connected ? "connected" : "disconnected");
  return {
    nc,
    state,
    dropped: () => drop.signal,
    async roundTrip(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), timeoutMs);
      });
      try {
        return await Promise.race([nc.rtt().catch(() => undefined), late]);
      } finally {
        clearTimeout(timer);
      }
    },
    // Never resolves once close() was called: that closing is the caller's own.
    lost: lost.then((err) => (closing ? new Promise<Error>(() => undefined) : err)),
    async close(drainTimeoutMs) {
      closing = true;
      if (!nc.isClosed()) {
        if (state() === "connected") {
          // A drain waits for the server; if the bus goes away meanwhile, close anyway.
          let timer: NodeJS.Timeout | undefined;
          const timeout = new Promise<"timeout">((resolve) => {
            timer = setTimeout(() => resolve("timeout"), drainTimeoutMs);
          });
          const drained = nc.drain().then(
            () => "drained" as const,
            (err: unknown) => {
              log.warn({ err }, "bus drain failed; closing");
              return "failed" as const;
            },
          );
          const outcome = await Promise.race([drained, timeout]);
          clearTimeout(timer);
          if (outcome === "timeout") log.warn("bus drain did not finish in time; closing");
        }
        if (!nc.isClosed()) await nc.close();
      }
      await watching;
    },
  };
}
