/**
 * checks.findings in the catalog: one check's rows over a window ending at the latest epoch,
 * a page at a time, as JSON rows or CSV. The rows come from the check's macro (with the
 * system's thresholds), through the same read-only path and formatting as db.query.
 */
import { BadRequestError } from "../domain/index.ts";
import { EPOCH_TEXT_FORMAT } from "./epoch-bound.ts";
import type { Catalog } from "./open-catalog.ts";
import { runReadOnlyQuery } from "./query.ts";

export interface FindingsPageRequest {
  /** The rows' SELECT over [$1, $2] (checks/ findingsRowsSql). */
  readonly rowsSql: string;
  /** An SQL interval ending at the latest epoch; undefined: the latest epoch only. */
  readonly duration?: string;
  /** 1-based. */
  readonly page: number;
  readonly pageSize: number;
  readonly format: "json" | "csv";
  readonly timeoutMs: number;
}

export interface FindingsPage {
  /** JSON array of row objects, or CSV with a header line. */
  readonly rows: string;
  readonly totalRows: number;
}

export async function queryFindingsPage(
  catalog: Catalog,
  request: FindingsPageRequest,
): Promise<FindingsPage> {
  const window = await findingsWindow(catalog, request.duration);
  const options = { maxRows: request.pageSize + 1, timeoutMs: request.timeoutMs };
  const params = window ? [window.from, window.to] : [null, null];
  const counted = JSON.parse(
    await runReadOnlyQuery(
      catalog,
      { sql: `SELECT count(*) AS n FROM (${request.rowsSql})`, params },
      { ...options, format: "json" },
    ),
  ) as { n: number }[];
  const offset = (request.page - 1) * request.pageSize;
  const rows = await runReadOnlyQuery(
    catalog,
    { sql: `${request.rowsSql}\nLIMIT ${request.pageSize} OFFSET ${offset}`, params },
    { ...options, format: request.format },
  );
  return { rows, totalRows: Number(counted[0]?.n ?? 0) };
}

/** [latest epoch − duration, latest epoch] as RFC 3339; undefined for a catalog without epochs. */
async function findingsWindow(
  catalog: Catalog,
  duration: string | undefined,
): Promise<{ from: string; to: string } | undefined> {
  return catalog.withReader(async (con) => {
    let reader;
    try {
      reader = await con.runAndReadAll(
        `SELECT strftime(max(epoch), '${EPOCH_TEXT_FORMAT}'),
                strftime(max(epoch) - CAST(coalesce($1, '0 seconds') AS INTERVAL), '${EPOCH_TEXT_FORMAT}'),
                CAST(coalesce($1, '0 seconds') AS INTERVAL) < INTERVAL '0 seconds'
         FROM hx.epochs`,
        [duration ?? null],
      );
    } catch (cause) {
      throw new BadRequestError(
        `time.duration "${duration}" is not an SQL interval; use e.g. "30 minutes", "1 hour" or "2 days"`,
        { cause },
      );
    }
    const [to, from, negative] = reader.getRowsJS()[0] ?? [];
    if (negative === true) throw new BadRequestError(`time.duration "${duration}" must not be negative`);
    if (typeof to !== "string" || typeof from !== "string") return undefined;
    return { from, to };
  });
}
