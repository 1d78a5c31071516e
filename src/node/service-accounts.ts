import type { NatsConnection } from "@nats-io/nats-core";
import { connectNats, EMBEDDED_ACCOUNT } from "../bus/index.ts";
import type { SystemConfig, TlsFiles } from "../config/index.ts";
import type { Logger } from "../lib/index.ts";
import type { ServiceAccount } from "../scrape/index.ts";

/**
 * How often the connections to the monitored system (the scrape's, and each service
 * account's) are pinged: a server that hangs with its socket open (frozen, swapping, a
 * half-open network) answers nothing, and with nats.js's default (2 minutes, 2 outstanding)
 * the scrape would see no server (or no service) answer for minutes before the client moved
 * to another. Two missed pings, at most 10 s apart, move it.
 */
export function monitoredPingMs(system: SystemConfig): number {
  return Math.max(1_000, Math.min(system.scraper.intervalMs, 10_000));
}

/**
 * The accounts whose micro services are gathered: those configured under `system.nats.accounts`,
 * each through its own connection, made on first use and retried each epoch until it
 * succeeds (bad credentials for one account must not stop the scrape); when the system is
 * the embedded sink itself, natsmon's own account on its sink connection, so its own
 * `monitor` service shows.
 */
export function serviceAccounts(
  options: { sink: NatsConnection; system: SystemConfig; nodeId: string },
  log: Logger,
): (ServiceAccount & { close(): Promise<void> })[] {
  const { system } = options;
  if (!system.nats) {
    const nc = options.sink;
    return [{ name: EMBEDDED_ACCOUNT.monitor, connection: () => Promise.resolve(nc), close: async () => {} }];
  }
  const url = system.nats.url;
  return (system.nats.accounts ?? []).map((account) => {
    let connected: NatsConnection | undefined;
    return {
      name: account.name,
      async connection() {
        if (connected) return connected;
        const name = `natsmon ${options.nodeId} services ${system.id}/${account.name}`;
        // Pinged as the scrape connection is: one left on a frozen server would find no
        // service for minutes (each such epoch an error) before nats.js's default pings moved it.
        const tls = accountTls(system.nats!.tls, account.tls);
        connected = await connectNats({ ...account, url, ...(tls ? { tls } : {}) }, name, {
          pingIntervalMs: monitoredPingMs(system),
        });
        log.info({ account: account.name }, "connected to the account for service discovery");
        return connected;
      },
      async close() {
        await connected?.drain().catch(() => undefined);
      },
    };
  });
}

/**
 * An account's TLS on the system's servers: the system's CA unless the account names its
 * own, and the account's client certificate when it has one (a server that maps
 * certificates to users knows the account's user by it), else the system's.
 */
export function accountTls(
  system: TlsFiles | undefined,
  account: TlsFiles | undefined,
): TlsFiles | undefined {
  const ca = account?.ca || system?.ca;
  const pair = account?.cert ? account : system?.cert ? system : undefined;
  if (!ca && !pair) return undefined;
  return { ...(ca ? { ca } : {}), ...(pair ? { cert: pair.cert!, key: pair.key! } : {}) };
}
