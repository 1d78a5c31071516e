/**
 * `ops.diagnostics.*`: one request proxied to one named monitored server through the system
 * account (`$SYS.REQ.SERVER.<id>.PROFILEZ|EXPVARZ`). The server is found by name with a
 * STATSZ ping (ids change on restart, so none is cached), and its version is checked first:
 * 2.9 does not answer these requests at all (nats-monitoring §0.1).
 */
import type { NatsConnection } from "@nats-io/nats-core";
import { gather, type GatherOptions } from "./gather.ts";
import { versionAtLeast } from "./sources.ts";

export type DiagnosticKind = "profilez" | "expvarz";

/** First release answering each request, and the one adding PROFILEZ `duration`. */
export const DIAGNOSTIC_SINCE = {
  profilez: "2.10.0",
  expvarz: "2.10.16",
  profilezDuration: "2.10.19",
} as const;

export interface MonitoredServer {
  readonly name: string;
  readonly id: string;
  readonly version: string;
}

export type DiagnosticOutcome =
  | { readonly kind: "reply"; readonly server: MonitoredServer; readonly data: unknown }
  | { readonly kind: "not-found"; readonly answered: readonly string[] }
  | {
      readonly kind: "too-old";
      readonly server: MonitoredServer;
      readonly needs: string;
      readonly what: string;
    }
  | { readonly kind: "timeout"; readonly server: MonitoredServer; readonly ms: number }
  | { readonly kind: "server-error"; readonly server: MonitoredServer; readonly error: string };

/** Finds a server by exact name (2.9's `server_name` filter matches substrings: §0.13). */
export async function findServer(
  nc: NatsConnection,
  name: string,
  options: GatherOptions,
): Promise<{ server?: MonitoredServer; answered: string[] }> {
  const result = await gather(nc, "$SYS.REQ.SERVER.PING.STATSZ", { server_name: name }, options);
  const replies = result.kind === "replies" ? result.replies : [];
  const hit = replies.find((r) => r.server === name);
  const id = hit?.envelope.server?.id;
  return {
    answered: replies.map((r) => r.server).sort(),
    ...(hit && id ? { server: { name, id, version: hit.envelope.server?.ver ?? "" } } : {}),
  };
}

/**
 * Asks server `name` for `kind` with `body`. `waitMs` is how long the server may take
 * (a CPU profile takes its duration).
 */
export async function requestDiagnostic(
  nc: NatsConnection,
  name: string,
  kind: DiagnosticKind,
  body: Readonly<Record<string, unknown>>,
  options: GatherOptions & { waitMs: number },
): Promise<DiagnosticOutcome> {
  const { server, answered } = await findServer(nc, name, options);
  if (!server) return { kind: "not-found", answered };
  const needs = DIAGNOSTIC_SINCE[kind];
  if (!versionAtLeast(server.version, needs)) {
    return { kind: "too-old", server, needs, what: kind.toUpperCase() };
  }
  if (kind === "profilez" && body.duration !== undefined) {
    const since = DIAGNOSTIC_SINCE.profilezDuration;
    if (!versionAtLeast(server.version, since)) {
      return { kind: "too-old", server, needs: since, what: "PROFILEZ with a duration" };
    }
  }
  const subject = `$SYS.REQ.SERVER.${server.id}.${kind.toUpperCase()}`;
  const started = performance.now();
  let reply;
  try {
    reply = await nc.request(subject, JSON.stringify(body), { timeout: options.waitMs });
  } catch (err) {
    const ms = Math.round(performance.now() - started);
    const code = (err as { code?: unknown }).code;
    if (code === "TIMEOUT" || /timeout/i.test(String(err))) return { kind: "timeout", server, ms };
    return { kind: "server-error", server, error: err instanceof Error ? err.message : String(err) };
  }
  const envelope = reply.json<{ data?: unknown; error?: { description?: string } }>();
  if (envelope.error) {
    return { kind: "server-error", server, error: envelope.error.description ?? "error without description" };
  }
  return { kind: "reply", server, data: envelope.data };
}
