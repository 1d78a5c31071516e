import type { OpsInfoReply } from "../protocol/index.ts";
import type { ApiHandler } from "./adapter.ts";

/** `ops.info`: capability and configuration discovery (spec: Instance info). */
export function opsInfoHandler(info: () => OpsInfoReply): ApiHandler {
  return () => Promise.resolve({ body: JSON.stringify(info()) });
}
