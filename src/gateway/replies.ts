/** An HTTP answer the gateway sends: outcomes are values, mapped here and only here. */
export interface GatewayReply {
  readonly status: number;
  readonly contentType: string;
  readonly body: string | Uint8Array;
}

/** The JSON body of every error the gateway answers: the micro error's fields over HTTP. */
export interface ErrorBody {
  readonly code: number;
  readonly description: string;
  /** The upstream error's `data` (e.g. a multi-line SQL error in full), when it sent one. */
  readonly data?: unknown;
}

export const JSON_CONTENT_TYPE = "application/json; charset=utf-8";

export function errorReply(status: number, description: string, data?: unknown): GatewayReply {
  const body: ErrorBody = { code: status, description, ...(data === undefined ? {} : { data }) };
  return { status, contentType: JSON_CONTENT_TYPE, body: JSON.stringify(body) };
}

export function jsonReply(value: unknown, status = 200): GatewayReply {
  return { status, contentType: JSON_CONTENT_TYPE, body: JSON.stringify(value) };
}
