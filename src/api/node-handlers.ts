import { BadRequestError } from "../domain/index.ts";
import type {
  NatsInfoReply,
  PprofReply,
  PprofRequest,
  VersionCheckReply,
  VersionReply,
} from "../protocol/index.ts";
import { parseJsonRequest, type ApiHandler } from "./adapter.ts";

/** The node-space ops endpoints' view of the node (node/node-ops.ts). */
export interface NodeOpsPort {
  version(): VersionReply;
  checkVersion(): Promise<VersionCheckReply>;
  /** Throws NotFoundError when the sink is external. */
  natsInfo(): NatsInfoReply;
  pprof(request: PprofRequest): Promise<PprofReply>;
  metrics(): Promise<{ text: string; contentType: string }>;
}

/** Longest CPU profile one request may ask for. */
export const MAX_PPROF_MS = 60_000;

export function opsVersionHandler(port: NodeOpsPort): ApiHandler {
  return () => Promise.resolve({ body: JSON.stringify(port.version()) });
}

export function opsVersionCheckHandler(port: NodeOpsPort): ApiHandler {
  return async () => ({ body: JSON.stringify(await port.checkVersion()) });
}

export function opsNatsInfoHandler(port: NodeOpsPort): ApiHandler {
  return () => Promise.resolve({ body: JSON.stringify(port.natsInfo()) });
}

export function opsMetricsHandler(port: NodeOpsPort): ApiHandler {
  return async () => {
    const { text, contentType } = await port.metrics();
    return { body: text, headers: { "Content-Type": contentType } };
  };
}

export function opsPprofHandler(port: NodeOpsPort): ApiHandler {
  return async (request) => {
    const body = parseJsonRequest(request.data) as Partial<PprofRequest>;
    const type = body.type ?? "cpu";
    if (type !== "cpu" && type !== "heap") throw new BadRequestError('type must be "cpu" or "heap"');
    const duration = body.duration_ms ?? 1000;
    if (type === "cpu" && (!Number.isInteger(duration) || duration < 1 || duration > MAX_PPROF_MS)) {
      throw new BadRequestError(`duration_ms must be an integer from 1 to ${MAX_PPROF_MS}`);
    }
    return {
      body: JSON.stringify(await port.pprof(type === "cpu" ? { type, duration_ms: duration } : { type })),
    };
  };
}
