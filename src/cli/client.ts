import { connect } from "@nats-io/transport-node";
import { errors, type NatsConnection } from "@nats-io/nats-core";
import { connectionOptions, type ConnectTarget } from "../bus/index.ts";
import { redactUrl } from "../lib/index.ts";
import type { Command } from "commander";

export interface ClientOptions {
  server?: string;
  creds?: string;
  user?: string;
  password?: string;
  token?: string;
}

/** The embedded default listens here, so `natsmon query` works next to `npm start`. */
export const DEFAULT_SERVER = "nats://127.0.0.1:4222";

/** Adds the usual NATS connection flags to a client command. */
export function withClientOptions(command: Command): Command {
  return command
    .option(
      "-s, --server <url>",
      `NATS server URL(s), comma-separated (env NATS_URL; default ${DEFAULT_SERVER})`,
    )
    .option("--creds <file>", "NATS credentials file")
    .option("--user <user>", "NATS user")
    .option("--password <password>", "NATS password")
    .option("--token <token>", "NATS token");
}

/** Connects a client command to the bus; fails fast with a hint rather than retrying for ever. */
export async function connectClient(options: ClientOptions): Promise<NatsConnection> {
  const url = options.server ?? process.env.NATS_URL ?? DEFAULT_SERVER;
  const target: ConnectTarget = {
    url,
    ...(options.creds ? { creds: options.creds } : {}),
    ...(options.user ? { user: options.user } : {}),
    ...(options.password ? { password: options.password } : {}),
    ...(options.token ? { token: options.token } : {}),
  };
  try {
    return await connect({ ...(await connectionOptions(target, "natsmon-cli")), maxReconnectAttempts: 2 });
  } catch (cause) {
    throw new Error(
      `cannot connect to ${redactUrl(url)}: ${(cause as Error).message}. ${connectHint(cause, target)}`,
      {
        cause,
      },
    );
  }
}

/**
 * What to do about a failed connection: a server that refused the credentials is running, so
 * the hint is about credentials, not about starting a node.
 */
function connectHint(cause: unknown, target: ConnectTarget): string {
  if (cause instanceof errors.AuthorizationError || cause instanceof errors.UserAuthenticationExpiredError) {
    const given = target.creds ?? target.user ?? target.token;
    return (
      `The server refused ${given === undefined ? "a client without credentials" : "the credentials given"}: ` +
      "give a user it accepts with --user and --password, --token, or --creds FILE."
    );
  }
  return "Is a natsmon node running (npm start)? Point --server or NATS_URL at its bus.";
}

/** Prints an error for a person and sets a failing exit code. */
export function fail(message: string, exitCode = 1): void {
  process.stderr.write(`natsmon: ${message}\n`);
  process.exitCode = exitCode;
}
