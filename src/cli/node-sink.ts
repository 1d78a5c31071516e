import type { NatsConnection } from "@nats-io/nats-core";
import type { Config } from "../config/index.ts";
import { connectClient, type ClientOptions } from "./client.ts";

/**
 * Connects to the node's own sink, as its configuration names it, unless the client flags
 * name another bus or credentials: the commands that write the node's delivery log.
 */
export function connectNodeSink(config: Config, options: ClientOptions): Promise<NatsConnection> {
  const sink = config.sink;
  return connectClient({
    ...(sink.url ? { server: sink.url } : {}),
    ...(sink.creds ? { creds: sink.creds } : {}),
    ...(sink.user ? { user: sink.user } : {}),
    ...(sink.password ? { password: sink.password } : {}),
    ...(sink.token ? { token: sink.token } : {}),
    ...definedOnly(options),
  });
}

function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as Partial<T>;
}
