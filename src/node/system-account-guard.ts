import type { NatsConnection, Status } from "@nats-io/nats-core";
import { describeCredentials, describeTarget, type ConnectTarget } from "../bus/index.ts";
import type { Logger } from "../lib/index.ts";
import { checkSystemAccount, systemAccountProblem, type SystemAccountCheck } from "../scrape/index.ts";

/** The scrape cannot work through the connection: not in the system account, or refused the requests. */
export class SystemAccountProblem extends Error {}

export interface SystemAccountGuard {
  /**
   * Checks a connection to the monitored system; the operator's message when the scrape
   * cannot work through it. A problem is logged once (again only when it changes), and its
   * clearing once: natsmon retries every 30 s at most, which would otherwise repeat it.
   */
  check(nc: NatsConnection): Promise<string | undefined>;
  /**
   * Checks again after each reconnect (a server whose configuration moved the user to
   * another account, or another server of the URL list configured otherwise), and calls
   * `onProblem` once with the first problem found; stop() ends the watch.
   */
  watchReconnects(nc: NatsConnection, onProblem: (problem: string) => void): { stop(): Promise<void> };
}

/** The guard of one system's scrape connection. */
export function systemAccountGuard(options: {
  systemId: string;
  target: ConnectTarget;
  timeoutMs: number;
  log: Logger;
}): SystemAccountGuard {
  const { log } = options;
  const url = describeTarget(options.target);
  const credentials = describeCredentials(options.target);
  const who = { systemId: options.systemId, url, credentials };
  /** What the last problem logged was (its kind, account or refused operation), until it clears. */
  let logged: string | undefined;
  const check = async (nc: NatsConnection) => {
    const seen = await checkSystemAccount(nc, options.timeoutMs);
    const problem = systemAccountProblem(seen, who);
    if (problem === undefined) {
      if (logged !== undefined) {
        log.info(
          { url, credentials, server: nc.info?.server_name },
          "the scrape connection works through the system account now",
        );
      }
      logged = undefined;
      return undefined;
    }
    const key = problemKey(seen);
    if (key !== logged) log.error({ url, credentials, seen }, problem);
    logged = key;
    return problem;
  };
  return {
    check,
    watchReconnects(nc, onProblem) {
      // nats.js hands out a queued iterator, which stop() ends (typed as a plain iterable).
      const statuses = nc.status() as AsyncIterable<Status> & { stop(): void };
      const watching = (async () => {
        for await (const status of statuses) {
          if (status.type !== "reconnect") continue;
          // A connection closed meanwhile (the scrape side stopping) has nothing left to check.
          const problem = await check(nc).catch(() => undefined);
          if (problem !== undefined) {
            onProblem(problem);
            return;
          }
        }
      })();
      return {
        async stop() {
          statuses.stop();
          await watching;
        },
      };
    },
  };
}

function problemKey(seen: SystemAccountCheck): string {
  switch (seen.kind) {
    case "other-account":
      return `${seen.kind} ${seen.account ?? ""}`;
    case "refused":
      return `${seen.kind} ${seen.operation}`;
    case "answered":
    case "unanswered":
      return seen.kind;
  }
}
