import type { NatsConnection } from "@nats-io/nats-core";
import type { OwnConnection } from "../protocol/index.ts";

/**
 * A connection of natsmon's as the server it is on knows it: that server's name and the
 * client id it gave the connection (CONNZ `cid`), both from the server's INFO, which the
 * client reads again at every reconnect. Undefined while it is not connected, or when the
 * server gave no name or id.
 */
export function ownConnection(nc: NatsConnection, account?: string): OwnConnection | undefined {
  const info = nc.info;
  if (nc.isClosed() || !info || typeof info.client_id !== "number" || !info.server_name) return undefined;
  return { server: info.server_name, cid: info.client_id, ...(account === undefined ? {} : { account }) };
}

/**
 * natsmon's connections to the monitored system this epoch: the scrape connection (in the
 * system account, which the catalog knows) and each account's service-discovery connection.
 */
export function ownConnections(
  monitored: NatsConnection,
  services: readonly { readonly connection?: OwnConnection }[],
): OwnConnection[] {
  const own = [ownConnection(monitored), ...services.map((s) => s.connection)];
  return own.filter((c): c is OwnConnection => c !== undefined);
}
