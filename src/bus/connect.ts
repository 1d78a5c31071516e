import { readFile } from "node:fs/promises";
import { connect } from "@nats-io/transport-node";
import { credsAuthenticator, type ConnectionOptions, type NatsConnection } from "@nats-io/nats-core";
import type { NatsAuth } from "../config/index.ts";

export interface ConnectTarget extends NatsAuth {
  /** One URL or several, comma-separated. */
  readonly url: string;
}

/** Connection options for a target: its servers and whichever credentials it carries. */
export async function connectionOptions(target: ConnectTarget, name: string): Promise<ConnectionOptions> {
  const options: ConnectionOptions = { servers: target.url.split(",").map((s) => s.trim()), name };
  if (target.creds) options.authenticator = credsAuthenticator(await readFile(target.creds));
  if (target.user !== undefined) options.user = target.user;
  if (target.password !== undefined) options.pass = target.password;
  if (target.token !== undefined) options.token = target.token;
  return options;
}

/**
 * Connects and keeps reconnecting for ever: a monitor must outlive restarts of the
 * servers it watches. That includes a reconnect refused for its credentials (rotated on
 * the server, say): the client would otherwise close for good after two such refusals in
 * a row and leave a running process that can never reach the bus again.
 */
export async function connectNats(
  target: ConnectTarget,
  name: string,
  options: { pingIntervalMs?: number } = {},
): Promise<NatsConnection> {
  return connect({
    ...(await connectionOptions(target, name)),
    maxReconnectAttempts: -1,
    reconnectTimeWait: 1000,
    ignoreAuthErrorAbort: true,
    ...(options.pingIntervalMs ? { pingInterval: options.pingIntervalMs, maxPingOut: 2 } : {}),
  });
}

/**
 * Tries the target once and closes again: the error a first connection meets (refused,
 * unreachable, credentials refused). connectNats itself would keep retrying refused
 * credentials for ever when the servers gossip further URLs, saying nothing.
 */
export async function probeNats(target: ConnectTarget, name: string): Promise<void> {
  const nc = await connect({ ...(await connectionOptions(target, name)), maxReconnectAttempts: 0 });
  await nc.close();
}

/** The target's URLs without credentials, for messages. */
export function describeTarget(target: ConnectTarget): string {
  return target.url
    .split(",")
    .map((u) => u.trim().replace(/\/\/[^/@]*@/, "//"))
    .join(",");
}
