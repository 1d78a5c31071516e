import { connect } from "@nats-io/transport-node";
import { errors, type NatsConnection } from "@nats-io/nats-core";
import { connectionOptions, tlsHint, type ConnectTarget } from "../bus/index.ts";
import type { TlsFiles } from "../config/index.ts";
import { redactUrl } from "../lib/index.ts";
import type { Command } from "commander";
import { resolveSystem } from "./discover.ts";

export interface ClientOptions {
  server?: string;
  creds?: string;
  nkey?: string;
  user?: string;
  password?: string;
  token?: string;
  tlsca?: string;
  tlscert?: string;
  tlskey?: string;
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
    .option("--creds <file>", `NATS credentials file (env ${CREDENTIAL_ENV.creds})`)
    .option("--nkey <file>", `file holding the user's NKEY seed (env ${CREDENTIAL_ENV.nkey})`)
    .option("--user <user>", `NATS user (env ${CREDENTIAL_ENV.user})`)
    .option("--password <password>", `NATS password (env ${CREDENTIAL_ENV.password}: keeps it out of ps)`)
    .option("--token <token>", `NATS token (env ${CREDENTIAL_ENV.token})`)
    .option("--tlsca <file>", `CA that signed the servers' certificates, PEM (env ${TLS_ENV.ca})`)
    .option(
      "--tlscert <file>",
      `client certificate, PEM, for servers that verify clients (env ${TLS_ENV.cert})`,
    )
    .option("--tlskey <file>", `the client certificate's private key, PEM (env ${TLS_ENV.key})`)
    .hook("preAction", (_, action) => {
      // Before anything connects: a certificate without its key is a usage error (exit 2).
      try {
        clientTls(action.opts<ClientOptions>());
      } catch (err) {
        action.error(`error: ${(err as Error).message}`);
      }
    });
}

/** The variables of the TLS flags, as the nats CLI names them. */
export const TLS_ENV = { ca: "NATS_CA", cert: "NATS_CERT", key: "NATS_KEY" } as const;

/**
 * The TLS files a client command connects with: each flag, else its variable. A certificate
 * and its key come together; one without the other is refused.
 */
export function clientTls(
  given: Pick<ClientOptions, "tlsca" | "tlscert" | "tlskey">,
  env: NodeJS.ProcessEnv = process.env,
): TlsFiles | undefined {
  const ca = given.tlsca || env[TLS_ENV.ca] || undefined;
  const cert = given.tlscert || env[TLS_ENV.cert] || undefined;
  const key = given.tlskey || env[TLS_ENV.key] || undefined;
  if (Boolean(cert) !== Boolean(key)) {
    throw new Error(
      cert
        ? `--tlscert (or ${TLS_ENV.cert}) needs --tlskey (or ${TLS_ENV.key}): the certificate's private key`
        : `--tlskey (or ${TLS_ENV.key}) needs --tlscert (or ${TLS_ENV.cert}): the certificate it is the key of`,
    );
  }
  if (!ca && !cert) return undefined;
  return { ...(ca ? { ca } : {}), ...(cert && key ? { cert, key } : {}) };
}

/** The variables of the credential flags: the names the nats CLI reads, as --server reads NATS_URL. */
export const CREDENTIAL_ENV = {
  creds: "NATS_CREDS",
  nkey: "NATS_NKEY",
  user: "NATS_USER",
  password: "NATS_PASSWORD",
  token: "NATS_TOKEN",
} as const;

type Credentials = Pick<ClientOptions, keyof typeof CREDENTIAL_ENV>;

/**
 * The credentials a client command connects with: those its flags give (or, for the commands
 * that read it, the node's configuration) win; when they give none, the environment's. A
 * NATS_PASSWORD also completes a --user given without --password. A password on a command line
 * shows in `ps`; in the environment it does not. Empty variables count as unset.
 */
export function clientCredentials(given: Credentials, env: NodeJS.ProcessEnv = process.env): Credentials {
  const fromEnv = (key: keyof Credentials) => env[CREDENTIAL_ENV[key]] || undefined;
  const own = [given.creds, given.nkey, given.user, given.password, given.token].some(Boolean);
  const picked: Credentials = own
    ? {
        creds: given.creds,
        nkey: given.nkey,
        user: given.user,
        password: given.password || (given.user ? fromEnv("password") : undefined),
        token: given.token,
      }
    : {
        creds: fromEnv("creds"),
        nkey: fromEnv("nkey"),
        user: fromEnv("user"),
        password: fromEnv("password"),
        token: fromEnv("token"),
      };
  return Object.fromEntries(Object.entries(picked).filter(([, v]) => v));
}

/** Connects a client command to the bus; fails fast with a hint rather than retrying for ever. */
export async function connectClient(options: ClientOptions): Promise<NatsConnection> {
  const url = options.server ?? process.env.NATS_URL ?? DEFAULT_SERVER;
  const tls = clientTls(options);
  const target: ConnectTarget = { url, ...clientCredentials(options), ...(tls ? { tls } : {}) };
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
 * Connects, finds the system to ask (`--system`, or the only one on the bus), runs `fn` and
 * closes the connection, whatever `fn` did.
 */
export async function onSystem(
  options: ClientOptions & { system?: string },
  fn: (nc: NatsConnection, system: string) => Promise<void>,
): Promise<void> {
  const nc = await connectClient(options);
  try {
    await fn(nc, await resolveSystem(nc, options.system));
  } finally {
    await nc.close();
  }
}

/**
 * What to do about a failed connection: a server that refused the credentials is running, so
 * the hint is about credentials, not about starting a node.
 */
function connectHint(cause: unknown, target: ConnectTarget): string {
  const tls = tlsHint(cause, target, {
    ca: `--tlsca FILE (or ${TLS_ENV.ca})`,
    cert: `--tlscert FILE and --tlskey FILE (or ${TLS_ENV.cert} and ${TLS_ENV.key})`,
  });
  if (tls) return tls;
  if (cause instanceof errors.AuthorizationError || cause instanceof errors.UserAuthenticationExpiredError) {
    const given = target.creds ?? target.nkey ?? target.user ?? target.token;
    return (
      `The server refused ${given === undefined ? "a client without credentials" : "the credentials given"}: ` +
      "give a user it accepts with --user and --password, --token, --creds FILE or --nkey FILE."
    );
  }
  return "Is a natsmon node running (npm start)? Point --server or NATS_URL at its bus.";
}

/** Prints an error for a person and sets a failing exit code. */
export function fail(message: string, exitCode = 1): void {
  process.stderr.write(`natsmon: ${message}\n`);
  process.exitCode = exitCode;
}
