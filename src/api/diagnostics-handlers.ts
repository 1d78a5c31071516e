/**
 * `ops.diagnostics.profilez` and `ops.diagnostics.expvarz` (shapes in protocol/payloads.ts):
 * request checks and error mapping here; finding and asking the server in scrape/diagnostics.ts.
 */
import { BadRequestError, ErrorCode, MonError, NotFoundError } from "../domain/index.ts";
import { parseDuration } from "../config/index.ts";
import type { DiagnosticReply } from "../protocol/index.ts";
import type { DiagnosticKind, DiagnosticOutcome } from "../scrape/index.ts";
import { parseJsonRequest, type ApiHandler } from "./adapter.ts";

/** Go runtime/pprof profile names nats-server accepts (plus `cpu`, 2.10.19+, with a duration). */
export const PROFILE_NAMES = [
  "allocs",
  "block",
  "goroutine",
  "heap",
  "mutex",
  "threadcreate",
  "cpu",
] as const;

/** Longest CPU profile natsmon asks for: the request holds the server's profiler meanwhile. */
const MAX_PROFILE_MS = 60_000;

export type AskDiagnostic = (
  server: string,
  kind: DiagnosticKind,
  body: Readonly<Record<string, unknown>>,
  waitMs: number,
) => Promise<DiagnosticOutcome>;

export function profilezHandler(ask: AskDiagnostic, systemId: string): ApiHandler {
  return async (request) => {
    const body = parseJsonRequest(request.data);
    const server = serverOf(body);
    const name = body.name ?? "heap";
    if (typeof name !== "string" || !(PROFILE_NAMES as readonly string[]).includes(name)) {
      throw new BadRequestError(`name must be one of ${PROFILE_NAMES.join(", ")}`);
    }
    const debug = body.debug ?? 0;
    if (typeof debug !== "number" || !Number.isInteger(debug) || debug < 0 || debug > 2) {
      throw new BadRequestError("debug must be 0, 1 or 2 (pprof's debug level)");
    }
    let durationMs: number | undefined;
    if (body.duration !== undefined) {
      durationMs = typeof body.duration === "string" ? parseDuration(body.duration) : undefined;
      if (durationMs === undefined || durationMs <= 0 || durationMs > MAX_PROFILE_MS) {
        throw new BadRequestError('duration must be a duration such as "5s", at most 60s');
      }
    } else if (name === "cpu") {
      throw new BadRequestError('a cpu profile needs a duration, such as "5s"');
    }
    const outcome = await ask(
      server,
      "profilez",
      {
        name,
        debug,
        ...(durationMs !== undefined ? { duration: Math.round(durationMs * 1e6) } : {}),
      },
      (durationMs ?? 0) + 10_000,
    );
    const data = replyOf(outcome, server, systemId) as { profile?: unknown; error?: unknown };
    if (typeof data.error === "string" && data.error !== "") {
      throw new MonError(
        ErrorCode.BadGateway,
        `server ${server} could not take the ${name} profile: ${data.error}`,
      );
    }
    return json({
      ...envelope(outcome),
      name,
      profile: typeof data.profile === "string" ? data.profile : "",
    });
  };
}

export function expvarzHandler(ask: AskDiagnostic, systemId: string): ApiHandler {
  return async (request) => {
    const server = serverOf(parseJsonRequest(request.data));
    const outcome = await ask(server, "expvarz", {}, 10_000);
    const data = replyOf(outcome, server, systemId);
    return json({ ...envelope(outcome), data });
  };
}

function serverOf(body: Readonly<Record<string, unknown>>): string {
  if (typeof body.server !== "string" || body.server === "") {
    throw new BadRequestError("server is required: the name of a monitored server");
  }
  return body.server;
}

function envelope(outcome: DiagnosticOutcome): Omit<DiagnosticReply, "name" | "profile" | "data"> {
  if (outcome.kind !== "reply") throw new Error("envelope of a failed outcome");
  return { server: outcome.server.name, server_id: outcome.server.id, version: outcome.server.version };
}

/** The server's data, or the error the outcome means. */
function replyOf(outcome: DiagnosticOutcome, server: string, systemId: string): unknown {
  switch (outcome.kind) {
    case "reply":
      return outcome.data ?? {};
    case "not-found":
      throw new NotFoundError(
        `no server named ${server} answered in system ${systemId}` +
          (outcome.answered.length ? ` (servers: ${outcome.answered.join(", ")})` : ""),
      );
    case "too-old":
      throw new MonError(
        ErrorCode.NotImplemented,
        `server ${server} runs nats-server ${outcome.server.version}; ${outcome.what} needs nats-server ${outcome.needs} or newer`,
      );
    case "timeout":
      throw new MonError(ErrorCode.GatewayTimeout, `server ${server} did not answer within ${outcome.ms} ms`);
    case "server-error":
      throw new MonError(ErrorCode.BadGateway, `server ${server} answered with an error: ${outcome.error}`);
  }
}

const json = (value: DiagnosticReply) => ({ body: JSON.stringify(value) });
