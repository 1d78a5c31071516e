import { BadRequestError } from "../domain/index.ts";
import { ACCEPT, CSV_MEDIA_TYPE, JSON_MEDIA_TYPE, type QueryRequest } from "../protocol/index.ts";
import { parseJsonRequest, type ApiHandler } from "./adapter.ts";

export type QueryFormat = "json" | "csv";

/** The catalog as the db handlers need it (node/ adapts catalog/ to this). */
export interface QueryPort {
  query(request: QueryRequest, format: QueryFormat): Promise<string>;
}

/** `db.query`: one read-only statement, buffered, JSON or CSV by `Accept` (spec: db.query). */
export function dbQueryHandler(port: QueryPort): ApiHandler {
  return async (request) => {
    const query = parseQueryRequest(parseJsonRequest(request.data));
    const format: QueryFormat = acceptsCsv(request.header(ACCEPT)) ? "csv" : "json";
    const result = await port.query(query, format);
    return {
      body: result,
      headers: { "Content-Type": format === "csv" ? CSV_MEDIA_TYPE : JSON_MEDIA_TYPE },
    };
  };
}

/** `{sql, params?}` of db.query and db.query.stream: 400 for a missing statement or bad params. */
export function parseQueryRequest(body: Record<string, unknown>): QueryRequest {
  const { sql, params } = body;
  if (typeof sql !== "string" || sql.trim() === "") {
    throw new BadRequestError('missing SQL: send {"sql": "SELECT …", "params": [...]}');
  }
  if (params !== undefined && !Array.isArray(params)) {
    throw new BadRequestError("params must be an array of positional parameters");
  }
  return { sql, ...(params ? { params: params as unknown[] } : {}) };
}

export function acceptsCsv(accept: string | undefined): boolean {
  return accept !== undefined && accept.split(",").some((part) => part.trim().startsWith(CSV_MEDIA_TYPE));
}
