import { BadRequestError } from "../domain/index.ts";
import type {
  OpsInfoReply,
  OpsMemoryReply,
  OpsSizingReply,
  OpsStorageReply,
  UsageRecord,
} from "../protocol/index.ts";
import type { Logger } from "../lib/index.ts";
import type { ApiHandler } from "./adapter.ts";

export function opsInfoHandler(info: () => OpsInfoReply): ApiHandler {
  return () => Promise.resolve({ body: JSON.stringify(info()) });
}

/** The catalog's figures for the system-space ops endpoints; each throws 503 while it is not open. */
export interface OpsPort {
  sizing(): Promise<OpsSizingReply>;
  memory(): Promise<OpsMemoryReply>;
  storage(): Promise<OpsStorageReply>;
  recordPageView(view: UsageRecord): Promise<void>;
}

export function opsSizingHandler(port: OpsPort): ApiHandler {
  return async () => ({ body: JSON.stringify(await port.sizing()) });
}

export function opsMemoryHandler(port: OpsPort): ApiHandler {
  return async () => ({ body: JSON.stringify(await port.memory()) });
}

export function opsStorageHandler(port: OpsPort): ApiHandler {
  return async () => ({ body: JSON.stringify(await port.storage()) });
}

/**
 * `usage.record`: a page view, published by the web tier; never answered (spec: Subject
 * table, "no reply"). An invalid payload or a failed write is logged and dropped.
 */
export function usageRecordHandler(port: OpsPort, log: Logger): ApiHandler {
  return async (request) => {
    try {
      await port.recordPageView(parseUsageRecord(request.data));
    } catch (err) {
      log.warn({ err }, "usage.record dropped");
    }
    return { body: "", noReply: true };
  };
}

/** A page view as the wire carries it: `path` required; the rest optional strings. */
export function parseUsageRecord(data: Uint8Array): UsageRecord {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(data));
  } catch {
    throw new BadRequestError("usage.record: the payload is not JSON");
  }
  if (typeof value !== "object" || value === null)
    throw new BadRequestError("usage.record: expected an object");
  const v = value as Record<string, unknown>;
  if (typeof v.path !== "string" || v.path === "")
    throw new BadRequestError("usage.record: path is required");
  for (const key of ["title", "referrer", "user", "at"] as const) {
    if (v[key] !== undefined && typeof v[key] !== "string")
      throw new BadRequestError(`usage.record: ${key} must be a string`);
  }
  if (typeof v.at === "string" && Number.isNaN(new Date(v.at).getTime()))
    throw new BadRequestError("usage.record: at must be an RFC 3339 time");
  return {
    path: v.path,
    ...(typeof v.title === "string" ? { title: v.title } : {}),
    ...(typeof v.referrer === "string" ? { referrer: v.referrer } : {}),
    ...(typeof v.user === "string" ? { user: v.user } : {}),
    ...(typeof v.at === "string" ? { at: v.at } : {}),
  };
}
