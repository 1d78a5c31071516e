import type { EndpointConfig } from "../config/index.ts";
import { targetUrl, type AttemptResult } from "./send.ts";

/** What a warning about a failed delivery carries besides its error. */
export interface FailureAdvice {
  /** The structured fields: the answer's status, when there was one, and where it was posted. */
  readonly fields: { readonly status_code?: number; readonly url: string };
  /** What to look at first, then how to try the endpoint again by hand. */
  readonly nextStep: string;
}

/**
 * The next step for a failed delivery, by how it failed: refused credentials point at the
 * endpoint's auth settings, a 404 at its url, no answer at the receiver itself. The URL is
 * shown without credentials or query string, where tokens tend to live.
 */
export function failureAdvice(
  endpoint: Pick<EndpointConfig, "name" | "type" | "url">,
  last: AttemptResult,
): FailureAdvice {
  const status = "status" in last ? last.status : undefined;
  const error = "error" in last ? last.error : "";
  // The error names the setting when TLS or the proxy failed (endpoint-agent.ts's hints).
  const setting = /endpoint's tls\.|proxy-url/.test(error);
  const check =
    status === undefined
      ? setting
        ? "the error names the endpoint setting to fix (tls or proxy-url)"
        : "check that the receiver is up and reachable from this node"
      : checkFor(endpoint, status);
  return {
    fields: { ...(status === undefined ? {} : { status_code: status }), url: publicUrl(targetUrl(endpoint)) },
    nextStep: `${check}; \`natsmon notify test ${shellWord(endpoint.name)}\` tries it`,
  };
}

function checkFor(endpoint: Pick<EndpointConfig, "type">, status: number): string {
  if (status === 401 || status === 403) return "check the endpoint's auth-type and auth-token";
  if (status === 404) {
    return endpoint.type === "alertmanager"
      ? "check the endpoint's url: the Alertmanager's base, under which natsmon posts to /api/v2/alerts"
      : "check the endpoint's url";
  }
  if (status >= 300 && status < 400) return "set the endpoint's url to the address that answers";
  if (status === 429 || status >= 500) return "the receiver is failing or overloaded: check its own logs";
  return "the receiver refused the alerts: its answer (error) says why";
}

/** The URL without user, password, query string or fragment. */
export function publicUrl(text: string): string {
  try {
    const url = new URL(text);
    url.username = "";
    url.password = "";
    url.search = "";
    url.hash = "";
    return url.toString();
  } catch {
    return "(not a URL)";
  }
}

/** The name as a shell word: quoted unless it is made of safe characters only. */
export function shellWord(name: string): string {
  return /^[\w.@%+=:,/-]+$/.test(name) ? name : `'${name.replace(/'/g, `'\\''`)}'`;
}
