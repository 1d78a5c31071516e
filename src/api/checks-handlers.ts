import { BadRequestError } from "../domain/index.ts";
import {
  ACCEPT,
  CSV_MEDIA_TYPE,
  JSON_MEDIA_TYPE,
  type CheckInfoReply,
  type CheckListGroup,
  type PageInfo,
} from "../protocol/index.ts";
import { parseJsonRequest, type ApiHandler } from "./adapter.ts";
import { acceptsCsv, type QueryFormat } from "./db-handlers.ts";

/** Rows per checks.findings page. */
export const FINDINGS_PAGE_SIZE = 100;
/**
 * The last page whose row offset is still a whole number exactly: past it the offset would
 * reach the SQL as a float (`OFFSET 1e+302`) and fail there. Every page up to it is answered,
 * those past the rows with none.
 */
export const FINDINGS_MAX_PAGE = Math.floor(Number.MAX_SAFE_INTEGER / FINDINGS_PAGE_SIZE);

/** The checks of one system as the handlers need them (node/ joins checks/ and catalog/). */
export interface ChecksPort {
  list(): readonly CheckListGroup[];
  /** Throws NotFoundError (404) for an unknown code, naming the current one for an old-style code. */
  info(code: string): CheckInfoReply;
  findingsPage(request: {
    code: string;
    duration: string | undefined;
    page: number;
    pageSize: number;
    format: QueryFormat;
  }): Promise<{ rows: string; totalRows: number }>;
}

/** `checks.list`: every check, grouped by category label. */
export function checksListHandler(port: ChecksPort): ApiHandler {
  return async () => Promise.resolve({ body: JSON.stringify(port.list()) });
}

/** `checks.info` `{code}`: 400 without a code, 404 for an unknown one. */
export function checksInfoHandler(port: ChecksPort): ApiHandler {
  return async (request) => {
    const code = requiredCode(parseJsonRequest(request.data));
    return Promise.resolve({ body: JSON.stringify(port.info(code)) });
  };
}

/**
 * `checks.findings` `{code, time?: {duration}, page?}`: runs the check over the window that
 * ends at the latest epoch, 100 rows a page, newest epoch first. Without `time` the window
 * is an optimization check's lookback, and the latest epoch alone for any other check. JSON
 * reply, or with `Accept: text/csv` the rows alone as CSV.
 */
export function checksFindingsHandler(port: ChecksPort): ApiHandler {
  return async (request) => {
    const body = parseJsonRequest(request.data);
    const code = requiredCode(body);
    const page = parsePage(body.page);
    const info = port.info(code);
    const duration =
      parseDuration(body.time) ??
      (info.lookback_seconds !== undefined ? `${info.lookback_seconds} seconds` : undefined);
    const format: QueryFormat = acceptsCsv(request.header(ACCEPT)) ? "csv" : "json";
    const result = await port.findingsPage({ code, duration, page, pageSize: FINDINGS_PAGE_SIZE, format });
    if (format === "csv") return { body: result.rows, headers: { "Content-Type": CSV_MEDIA_TYPE } };
    const pageInfo: PageInfo = {
      page,
      page_size: FINDINGS_PAGE_SIZE,
      total_rows: result.totalRows,
      total_pages: Math.ceil(result.totalRows / FINDINGS_PAGE_SIZE),
    };
    // The rows arrive as JSON text formatted like db.query's; they are spliced in, not re-parsed.
    const head = JSON.stringify({
      code: info.code,
      name: info.name,
      detail_columns: info.detail_columns,
      ...(info.dynamic_severity ? { dynamic_severity: true } : {}),
      ...(info.disabled ? { disabled: true } : {}),
    }).slice(0, -1);
    return {
      body: `${head},"rows":${result.rows},"page_info":${JSON.stringify(pageInfo)}}`,
      headers: { "Content-Type": JSON_MEDIA_TYPE },
    };
  };
}

function requiredCode(body: Record<string, unknown>): string {
  const { code } = body;
  if (typeof code !== "string" || code.trim() === "") {
    throw new BadRequestError('missing code: send {"code": "server-001"}');
  }
  return code;
}

function parseDuration(time: unknown): string | undefined {
  if (time === undefined || time === null) return undefined;
  if (typeof time !== "object" || Array.isArray(time)) {
    throw new BadRequestError('time must be an object such as {"duration": "1 hour"}');
  }
  const { duration } = time as Record<string, unknown>;
  if (duration === undefined) return undefined;
  if (typeof duration !== "string" || duration.trim() === "") {
    throw new BadRequestError('invalid duration: time.duration must be an SQL interval such as "1 hour"');
  }
  return duration;
}

function parsePage(page: unknown): number {
  if (page === undefined || page === null) return 1;
  if (typeof page !== "number" || !Number.isInteger(page) || page < 1 || page > FINDINGS_MAX_PAGE) {
    throw new BadRequestError(`page must be a whole number from 1 to ${FINDINGS_MAX_PAGE}`);
  }
  return page;
}
