import { PermissionViolationError, type NatsConnection, type Status } from "@nats-io/nats-core";

/**
 * Calls `onRefused` with the subject of each publish the server refuses `nc` for permissions,
 * until `stop()`. nats.js tells a refused publish only on the connection's status; a request
 * published there then simply goes unanswered, so a caller that wants to say why watches here.
 */
export function watchPublishRefusals(
  nc: NatsConnection,
  onRefused: (subject: string) => void,
): { stop(): Promise<void> } {
  // nats.js hands out a queued iterator, which stop() ends (typed as a plain iterable).
  const statuses = nc.status() as AsyncIterable<Status> & { stop(): void };
  const watching = (async () => {
    for await (const status of statuses) {
      const err = status.type === "error" ? status.error : undefined;
      if (err instanceof PermissionViolationError && err.operation === "publish") onRefused(err.subject);
    }
  })();
  return {
    async stop() {
      statuses.stop();
      await watching;
    },
  };
}
