/**
 * Credentials written into a server URL (`nats://user:password@host:4222`, or
 * `nats://token@host:4222`, as the nats CLI and the Go client read them): taken apart for
 * connecting, and hidden for messages.
 */

/** A URL scheme (`nats://`, `tls://`…), if any, then the userinfo, up to its URL's last `@`. */
const USERINFO = /(^|,)(\s*(?:[a-z][a-z0-9+.-]*:\/\/)?)([^/,\s]+)@/gi;

/**
 * A server URL, or a comma-separated list of them, fit for a message or a log line: the
 * password of a `user:password@` becomes `***` (`nats://user:***@host:4222`), and so does a
 * lone `token@`, which NATS reads as a token. Everything else is kept as it is.
 */
export function redactUrl(urls: string): string {
  return urls.replace(USERINFO, (_match, sep: string, head: string, userinfo: string) => {
    const colon = userinfo.indexOf(":");
    return `${sep}${head}${colon >= 0 ? `${userinfo.slice(0, colon)}:***` : "***"}@`;
  });
}

/** One server URL taken apart: the URL without its userinfo, and the credentials it carried. */
export interface UrlCredentials {
  readonly url: string;
  readonly user?: string;
  readonly password?: string;
  readonly token?: string;
}

/** Splits the credentials off one server URL (`user:password@`, or a lone `token@`). */
export function urlCredentials(url: string): UrlCredentials {
  let userinfo: string | undefined;
  const bare = url.replace(USERINFO, (_match, sep: string, head: string, info: string) => {
    userinfo = info;
    return `${sep}${head}`;
  });
  if (userinfo === undefined) return { url };
  const colon = userinfo.indexOf(":");
  if (colon < 0) return { url: bare, token: decodeURIComponent(userinfo) };
  return {
    url: bare,
    user: decodeURIComponent(userinfo.slice(0, colon)),
    password: decodeURIComponent(userinfo.slice(colon + 1)),
  };
}
