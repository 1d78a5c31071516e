import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { connect } from "@nats-io/transport-node";
import {
  credsAuthenticator,
  nkeyAuthenticator,
  type Authenticator,
  type ConnectionOptions,
  type NatsConnection,
} from "@nats-io/nats-core";
import type { NatsAuth } from "../config/index.ts";
import { redactUrl, urlCredentials, type UrlCredentials } from "../lib/index.ts";

export interface ConnectTarget extends NatsAuth {
  /** One URL or several, comma-separated. */
  readonly url: string;
}

/**
 * Connection options for a target: its servers and whichever credentials it carries. Without
 * credentials of its own, those of its URL are used (`nats://user:password@host`, or
 * `nats://token@host`), as the nats CLI and the Go client read them: nats.js ignores them.
 */
export async function connectionOptions(target: ConnectTarget, name: string): Promise<ConnectionOptions> {
  const urls = target.url.split(",").map((s) => urlCredentials(s.trim()));
  const options: ConnectionOptions = { servers: urls.map((u) => u.url), name };
  const own = target.creds ?? target.nkey ?? target.user ?? target.password ?? target.token;
  // Without credentials of its own, those of the first URL that carries some.
  const auth: NatsAuth | UrlCredentials =
    own === undefined ? (urls.find((u) => u.user !== undefined || u.token !== undefined) ?? {}) : target;
  if ("creds" in auth && auth.creds) options.authenticator = await rereading(auth.creds, credsAuthenticator);
  else if ("nkey" in auth && auth.nkey) {
    // A seed file ends with a line break, which is no part of the seed.
    const seed = (content: Uint8Array) => new TextEncoder().encode(new TextDecoder().decode(content).trim());
    options.authenticator = await rereading(auth.nkey, (content) => nkeyAuthenticator(seed(content)));
  }
  if (auth.user !== undefined) options.user = auth.user;
  if (auth.password !== undefined) options.pass = auth.password;
  if (auth.token !== undefined) options.token = auth.token;
  const { ca, cert, key } = target.tls ?? {};
  // nats.js reads the files at each connect, so renewed certificates are picked up on reconnect.
  if (ca || cert || key) {
    options.tls = {
      ...(ca ? { caFile: ca } : {}),
      ...(cert ? { certFile: cert } : {}),
      ...(key ? { keyFile: key } : {}),
    };
  }
  return options;
}

/**
 * An authenticator that reads `file` again at each connect and reconnect, so that rotated
 * credentials are used without a restart. A file that cannot be read or used at that moment
 * (being rewritten, say) leaves the last one that worked in use: nats.js closes a connection
 * for good when its authenticator throws. The first read fails as before, at set-up.
 */
async function rereading(file: string, make: (content: Uint8Array) => Authenticator): Promise<Authenticator> {
  let current = make(await readFile(file));
  return (nonce) => {
    try {
      const next = make(readFileSync(file));
      const auth = next(nonce);
      current = next;
      return auth;
    } catch {
      return current(nonce);
    }
  };
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

/** The target's URLs with any password in them redacted, for messages. */
export function describeTarget(target: ConnectTarget): string {
  return redactUrl(
    target.url
      .split(",")
      .map((u) => u.trim())
      .join(","),
  );
}

/**
 * Which credentials a target authenticates with, for messages, without secrets: the creds
 * file's path, the user's name, or that a token is used; its own, else its URL's, as
 * connectionOptions picks them.
 */
export function describeCredentials(target: ConnectTarget): string {
  if (target.creds) return `creds file ${target.creds}`;
  if (target.nkey) return `nkey seed file ${target.nkey}`;
  if (target.user !== undefined) return `user ${target.user}`;
  if (target.token !== undefined) return "a token";
  if (target.password !== undefined) return "a password without a user";
  const inUrl = target.url
    .split(",")
    .map((u) => urlCredentials(u.trim()))
    .find((u) => u.user !== undefined || u.token !== undefined);
  if (inUrl?.user !== undefined) return `user ${inUrl.user} (in the URL)`;
  if (inUrl?.token !== undefined) return "a token (in the URL)";
  // A server that maps certificates to users (verify_and_map) knows the client by it.
  if (target.tls?.cert) return `client certificate ${target.tls.cert}`;
  return "no credentials";
}

/**
 * What to set when a connection failed on TLS, or undefined when the failure does not look
 * like TLS. `given` says how this user gives the files: flags (`--tlsca FILE`), or the
 * settings' prefix (`sink.tls`: `sink.tls.ca`, `sink.tls.cert` and `sink.tls.key`).
 */
export function tlsHint(
  err: unknown,
  target: ConnectTarget,
  given: { ca: string; cert: string } | string,
): string | undefined {
  const names =
    typeof given === "string" ? { ca: `${given}.ca`, cert: `${given}.cert and ${given}.key` } : given;
  const message = err instanceof Error ? err.message : String(err);
  const ca = target.tls?.ca;
  if (/does not support 'tls'/.test(message)) {
    return `The server offers no TLS: give the URL of a listener with TLS, or leave out ${names.ca} and ${names.cert}.`;
  }
  if (/certificate|self[- ]signed|CERT_|unable to verify/i.test(message)) {
    return ca
      ? `The server's certificate is not signed by the CA in ${ca}: give the CA that signed it with ${names.ca}.`
      : `The server's certificate is not signed by a CA this machine trusts: give the CA that signed it with ${names.ca}.`;
  }
  // nats-server with `verify` drops a client that shows no certificate, which nats.js reports
  // as a timeout of the connection attempt.
  const tls = ca !== undefined || target.url.split(",").some((u) => u.trim().startsWith("tls://"));
  if (/timeout/i.test(message) && tls && !target.tls?.cert) {
    return `A server that verifies clients (tls verify) drops one without a certificate: give one with ${names.cert}.`;
  }
  return undefined;
}
