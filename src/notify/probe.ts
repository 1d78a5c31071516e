/**
 * Whether a notification endpoint can be reached as the node will reach it (its URL, TLS files
 * and auth headers), without sending an alert: `natsmon config check --connect`.
 * - An `alertmanager` endpoint: GET <base>/api/v2/status, which every Alertmanager v2 API
 *   answers with its version and cluster state; anything but 200 with that body fails.
 * - A `webhook` endpoint: GET of its URL. Any HTTP answer shows the receiver is reached, over
 *   verified TLS where the URL is https; only a POST shows it takes alerts, and that is what
 *   `natsmon notify test` does.
 */
import { Request, fetch } from "undici";
import type { EndpointConfig } from "../config/index.ts";
import { endpointDispatcher } from "./endpoint-agent.ts";
import { shellWord } from "./failure-advice.ts";
import { ATTEMPT_TIMEOUT_MS, describeError, requestHeaders, targetUrl } from "./send.ts";

export interface ProbeResult {
  readonly ok: boolean;
  /** What was found, to follow the endpoint's name: "ok, Alertmanager 0.25.0 …" or why not. */
  readonly detail: string;
}

export async function probeEndpoint(
  endpoint: EndpointConfig,
  options: { userAgent: string; timeoutMs?: number },
): Promise<ProbeResult> {
  const timeoutMs = options.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
  const url =
    endpoint.type === "alertmanager"
      ? targetUrl(endpoint).replace(/\/api\/v2\/alerts$/, "/api/v2/status")
      : endpoint.url;
  const agent = await endpointDispatcher(endpoint);
  if ("error" in agent) return { ok: false, detail: agent.error };
  const headers = requestHeaders(endpoint, "", options.userAgent);
  delete headers["content-type"];
  let status: number;
  let text: string;
  let location: string | null;
  try {
    const response = await fetch(
      new Request(url, {
        method: "GET",
        headers,
        redirect: "manual",
        signal: AbortSignal.timeout(timeoutMs),
      }),
      agent.dispatcher ? { dispatcher: agent.dispatcher } : {},
    );
    status = response.status;
    location = response.headers.get("location");
    text = await response.text();
  } catch (err) {
    const why =
      (err as Error).name === "TimeoutError"
        ? `no answer within ${timeoutMs} ms`
        : describeError(err, endpoint);
    return { ok: false, detail: `cannot reach ${url}: ${why}` };
  }
  if (status >= 300 && status < 400) {
    return {
      ok: false,
      detail:
        `${url} answers HTTP ${status}, ${location ? `redirecting to ${location}` : "a redirect without a location"}; ` +
        "natsmon does not follow redirects: set the endpoint's url to the address that answers",
    };
  }
  return endpoint.type === "alertmanager"
    ? alertmanagerStatus(url, status, text)
    : webhookAnswer(url, status, endpoint.name);
}

function alertmanagerStatus(url: string, status: number, text: string): ProbeResult {
  if (status === 401 || status === 403) {
    return {
      ok: false,
      detail: `${url} answers HTTP ${status}: check the endpoint's auth-type and auth-token`,
    };
  }
  let body: { versionInfo?: { version?: string }; cluster?: { status?: string } } | undefined;
  try {
    body = status === 200 ? (JSON.parse(text) as typeof body) : undefined;
  } catch {
    body = undefined;
  }
  if (!body?.versionInfo) {
    return {
      ok: false,
      detail:
        `${url} answers HTTP ${status}${status === 200 ? " without an Alertmanager's status" : ""}, not as an ` +
        "Alertmanager v2 API does: set the endpoint's url to the Alertmanager's base (natsmon posts to <url>/api/v2/alerts)",
    };
  }
  const cluster = body.cluster?.status ? `, cluster ${body.cluster.status}` : "";
  return {
    ok: true,
    detail: `ok, Alertmanager ${body.versionInfo.version ?? "?"} answers at ${url}${cluster}`,
  };
}

function webhookAnswer(url: string, status: number, name: string): ProbeResult {
  return {
    ok: true,
    detail:
      `reachable, ${url} answers HTTP ${status} to a GET; only a POST shows whether it takes the alerts: ` +
      `\`natsmon notify test ${shellWord(name)}\` sends one`,
  };
}
