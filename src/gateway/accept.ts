import { CSV_MEDIA_TYPE, JSON_MEDIA_TYPE } from "../protocol/index.ts";

/**
 * Whether an HTTP `Accept` header asks for CSV (spec: HTTP gateway rule 1): it names
 * `text/csv` with a non-zero quality, and JSON is not preferred over it. Each type's
 * quality is that of the most specific range matching it (RFC 9110, 12.5.1), so JSON wins
 * over `text/csv;q=0.5` when the header also allows any type at 1. A wildcard alone never
 * asks for CSV: a header without `text/csv`, or no header, gets JSON, `db.query`'s default.
 */
export function wantsCsv(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  const ranges = accept.split(",").map((range) => {
    const [type = "", ...params] = range.split(";").map((p) => p.trim().toLowerCase());
    return { type, q: quality(params) };
  });
  if (!ranges.some((r) => r.type === CSV_MEDIA_TYPE)) return false;
  const csv = qualityOf(ranges, CSV_MEDIA_TYPE);
  return csv > 0 && csv >= qualityOf(ranges, JSON_MEDIA_TYPE);
}

/** The quality the most specific matching range gives `mediaType` (0 when none matches). */
function qualityOf(ranges: readonly { type: string; q: number }[], mediaType: string): number {
  const [major] = mediaType.split("/");
  for (const candidate of [mediaType, `${major}/*`, "*/*"]) {
    const matching = ranges.filter((r) => r.type === candidate);
    if (matching.length > 0) return Math.max(...matching.map((r) => r.q));
  }
  return 0;
}

function quality(params: readonly string[]): number {
  const q = params.find((p) => p.startsWith("q="));
  if (q === undefined) return 1;
  const value = Number(q.slice(2));
  return Number.isFinite(value) ? value : 0;
}
