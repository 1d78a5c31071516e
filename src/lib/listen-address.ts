/** An HTTP listener's address (the gateway's --listen, a node's node.metrics-listen). */
export interface ListenAddress {
  readonly host: string;
  readonly port: number;
}

const HOST_PORT = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]*)):(\d{1,5})$/;

/**
 * Parses `host:port`, `[ipv6]:port` or `:port` (all interfaces). Port 0 lets the OS choose.
 * Throws with the accepted forms on anything else.
 */
export function parseListenAddress(text: string): ListenAddress {
  const match = HOST_PORT.exec(text.trim());
  const port = Number(match?.[3]);
  if (!match || port > 65_535) {
    throw new Error(`listen address "${text}" is not host:port, [ipv6]:port or :port (port 0-65535)`);
  }
  const host = match[1] ?? (match[2] === "" ? "0.0.0.0" : match[2]!);
  return { host, port };
}

/** The base URL of a listener on `host` (an IPv6 address in brackets) and `port`. */
export function httpBaseUrl(host: string, port: number, scheme: "http" | "https" = "http"): string {
  return `${scheme}://${host.includes(":") ? `[${host}]` : host}:${port}`;
}
