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
