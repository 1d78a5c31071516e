import type { NatsConnection } from "@nats-io/nats-core";
import type { Config } from "../config/index.ts";
import { connectClient, type ClientOptions } from "./client.ts";

/**
 * Connects to the node's own sink, as its configuration names it, unless the client flags
 * name another bus or credentials: the commands that write the node's delivery log.
 */
export function connectNodeSink(config: Config, options: ClientOptions): Promise<NatsConnection> {
  const sink = config.sink;
  const server = sink.url ?? embeddedUrl(sink.embedded);
  return connectClient({
    ...(server ? { server } : {}),
    ...(sink.creds ? { creds: sink.creds } : {}),
    ...(sink.nkey ? { nkey: sink.nkey } : {}),
    ...(sink.user ? { user: sink.user } : {}),
    ...(sink.password ? { password: sink.password } : {}),
    ...(sink.token ? { token: sink.token } : {}),
    ...(sink.tls?.ca ? { tlsca: sink.tls.ca } : {}),
    ...(sink.tls?.cert ? { tlscert: sink.tls.cert, tlskey: sink.tls.key } : {}),
    ...definedOnly(options),
  });
}

/**
 * Where the node's embedded server listens, as its configuration names it (a wildcard
 * host is reached on loopback); unknown when the OS chose the port (-1): the client
 * default, NATS_URL or --server then.
 */
function embeddedUrl(embedded: Config["sink"]["embedded"]): string | undefined {
  if (embedded.port <= 0) return undefined;
  const host = ["0.0.0.0", "::", "[::]", ""].includes(embedded.host) ? "127.0.0.1" : embedded.host;
  return `nats://${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${embedded.port}`;
}

function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as Partial<T>;
}
