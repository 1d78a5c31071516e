/**
 * How a notification endpoint is reached when the defaults do not do: through an HTTP proxy
 * (`proxy-url`), and with TLS that needs more than the machine's CA store: a private CA
 * (`tls.ca`), a client certificate (`tls.cert`, `tls.key`) for a receiver that verifies
 * clients, as an Alertmanager with `client_auth_type: RequireAndVerifyClientCert` does.
 *
 * The TLS files are read again when they change (their size, time or inode), so a renewed
 * certificate is used at the next attempt without a restart. Files that cannot be used at
 * that moment (half rewritten, say) leave the last good ones in use.
 */
import { stat, readFile } from "node:fs/promises";
import { createSecureContext, type SecureContextOptions } from "node:tls";
import { Agent, ProxyAgent, type Dispatcher } from "undici";
import type { EndpointConfig, TlsFiles } from "../config/index.ts";
import { redactUrl } from "../lib/index.ts";

interface Held {
  /** The TLS files' identity when they were read. */
  readonly signature: string;
  readonly agent: Dispatcher;
}

/** One agent per proxy and set of files, shared by the endpoints that name the same ones. */
const held = new Map<string, Held>();

/** The dispatcher for an endpoint, or why none can be made (nothing is sent then). */
export type EndpointDispatcher = { readonly dispatcher?: Dispatcher } | { readonly error: string };

/** The dispatcher to send with: undefined (the default one) for an endpoint with neither `tls` nor `proxy-url`. */
export async function endpointDispatcher(
  endpoint: Pick<EndpointConfig, "tls" | "proxyUrl">,
): Promise<EndpointDispatcher> {
  const { tls, proxyUrl } = endpoint;
  if (!tls && !proxyUrl) return {};
  const key = JSON.stringify([proxyUrl ?? "", tls?.ca ?? "", tls?.cert ?? "", tls?.key ?? ""]);
  const current = held.get(key);
  const fallback = (why: string): EndpointDispatcher =>
    current ? { dispatcher: current.agent } : { error: `not sent: ${why}; nothing reached the endpoint` };
  let signature: string;
  try {
    signature = tls ? await filesSignature(tls) : "";
  } catch (err) {
    return fallback(readFailure(err));
  }
  if (current?.signature === signature) return { dispatcher: current.agent };
  let agent: Dispatcher;
  try {
    const options = tls ? await tlsOptions(tls) : {};
    agent = proxyUrl
      ? // Plain HTTP goes to the proxy as an absolute-form request, as proxies expect it (many
        // allow CONNECT to port 443 only); HTTPS is tunnelled with CONNECT.
        new ProxyAgent({ uri: proxyUrl, proxyTunnel: false, requestTls: options })
      : new Agent({ connect: options });
  } catch (err) {
    return fallback(readFailure(err));
  }
  held.set(key, { signature, agent });
  // Requests under way on the old agent finish; it takes no new ones.
  if (current) void current.agent.close().catch(() => undefined);
  return { dispatcher: agent };
}

/** The files as TLS options; refuses what a handshake could not use (a key of another certificate, a broken PEM). */
async function tlsOptions(tls: TlsFiles): Promise<SecureContextOptions> {
  const [ca, cert, key] = await Promise.all([tls.ca, tls.cert, tls.key].map(read));
  const options = { ...(ca ? { ca } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}) };
  createSecureContext(options);
  return options;
}

async function filesSignature(tls: TlsFiles): Promise<string> {
  const files = [tls.ca, tls.cert, tls.key].filter((f): f is string => f !== undefined);
  const stats = await Promise.all(files.map((f) => stat(f)));
  return stats.map((s, i) => `${files[i]}:${s.ino}:${s.size}:${s.mtimeMs}`).join("|");
}

async function read(file: string | undefined): Promise<Buffer | undefined> {
  return file === undefined ? undefined : readFile(file);
}

function readFailure(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const what = e.path ? `${e.path}: ${e.code === "ENOENT" ? "it does not exist" : e.message}` : e.message;
  return `the endpoint's tls files cannot be used (${what}); \`natsmon config check\` names the fault`;
}

/** Verification errors of a certificate no CA natsmon trusts signed. */
const UNTRUSTED = new Set([
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_GET_ISSUER_CERT",
  "CERT_UNTRUSTED",
]);

/**
 * A failed request's socket error in words, with what to set when it is TLS's: the CA when
 * the receiver's certificate is not trusted, a client certificate when the receiver ended
 * the handshake (it asks for one) or closed the connection right after it (Go's TLS 1.3
 * servers, Alertmanager among them, close without an alert then).
 */
export function socketFailure(
  endpoint: Pick<EndpointConfig, "url" | "tls" | "proxyUrl">,
  cause: Error & { code?: unknown },
): string {
  const message = opensslReason(cause.message)
    // natsmon adds the machine's CA store itself: Node's advice would send the reader astray.
    .replace(/; if the root CA is installed locally, try running Node\.js with --use-system-ca$/, "");
  // Not every error's code is a string (a system error's errno-like codes are, some are not).
  const code = typeof cause.code === "string" ? cause.code : "";
  const hint = proxyHint(endpoint, cause.message, code) ?? tlsHint(endpoint, code);
  return hint ? `${message}: ${hint}` : message;
}

/** Errors that mean the connection to the proxy itself failed. */
const UNREACHABLE = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

/**
 * What the proxy answered or why it could not be reached: a refused CONNECT (https endpoints)
 * and a 407 arrive as errors; a plain http endpoint gets the proxy's other answers (502 when
 * it cannot reach the endpoint, say) as an HTTP status, which the attempt reports as such.
 */
function proxyHint(
  endpoint: Pick<EndpointConfig, "proxyUrl">,
  message: string,
  errorCode: string,
): string | undefined {
  if (!endpoint.proxyUrl) return undefined;
  const proxy = `the proxy in proxy-url (${redactUrl(endpoint.proxyUrl)})`;
  // undici's words: "Proxy response (403) !== 200 when HTTP Tunneling" to a CONNECT (https),
  // "Proxy Authentication Required (407)" to a plain request.
  const status = /^Proxy (?:response \((\d{3})\)|Authentication Required \((407)\))/.exec(message);
  const code = status?.[1] ?? status?.[2];
  // To a CONNECT, a 401 (tinyproxy's answer to wrong credentials) is about the proxy's too.
  if (code === "407" || code === "401") {
    return new URL(endpoint.proxyUrl).username
      ? `${proxy} refused the credentials in proxy-url: check its user and password`
      : `${proxy} asks for credentials: give them in proxy-url (http://USER:PASSWORD@host:port)`;
  }
  if (code !== undefined) {
    return (
      `${proxy} answered ${code} to the tunnel (CONNECT) to the endpoint: its access rules must let natsmon ` +
      "reach the endpoint's host and port, and the endpoint must be up"
    );
  }
  // Through a proxy, natsmon's only connection is the one to the proxy.
  if (UNREACHABLE.has(errorCode)) {
    return `${proxy} cannot be reached: check proxy-url, and that the proxy runs and is reachable from here`;
  }
  return undefined;
}

function tlsHint(
  endpoint: { readonly url: string; readonly tls?: TlsFiles },
  code: string,
): string | undefined {
  if (!endpoint.url.toLowerCase().startsWith("https:")) return undefined;
  const ca = endpoint.tls?.ca;
  const cert = endpoint.tls?.cert;
  if (UNTRUSTED.has(code)) {
    return ca
      ? `the receiver's certificate is not signed by the CA in the endpoint's tls.ca (${ca}): give the CA that signed it`
      : "the receiver's certificate is not signed by a CA this machine trusts: give the CA that signed it as the endpoint's tls.ca, or add it to the machine's CA store";
  }
  if (code === "CERT_HAS_EXPIRED")
    return "the receiver's certificate has expired: it is renewed on the receiver";
  if (code === "CERT_NOT_YET_VALID")
    return "the receiver's certificate is not valid yet: check this host's clock";
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID")
    return "the receiver's certificate is not for the url's host: use a host name it is issued for in the url";
  const refused = code.startsWith("ERR_SSL_") && code.includes("ALERT");
  if (!refused && code !== "UND_ERR_SOCKET") return undefined;
  if (cert) {
    return refused
      ? `the receiver refused the TLS handshake: check that it trusts the CA that signed the endpoint's tls.cert (${cert})`
      : undefined;
  }
  return `${refused ? "the receiver refused the TLS handshake" : "the receiver closed the connection"}; a receiver that requires client certificates does this: give the endpoint's tls.cert and tls.key`;
}

/** OpenSSL's error line ("40CD…:error:0A000410:SSL routines:…:ssl/tls alert handshake failure:…:SSL alert number 40") in words. */
function opensslReason(message: string): string {
  const match = /:SSL routines:[^:]*:([^:]+):.*?(SSL alert number \d+)?\s*$/s.exec(message);
  if (!match) return message.trim();
  return match[2] ? `${match[1]} (${match[2]})` : match[1]!;
}
