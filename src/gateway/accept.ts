import { CSV_MEDIA_TYPE } from "../protocol/index.ts";

/**
 * Whether an HTTP `Accept` header asks for CSV (spec: HTTP gateway rule 1): a `text/csv`
 * range with a non-zero quality that no JSON range outranks. Anything else, an absent
 * header included, gets JSON, the default of `db.query`.
 */
export function wantsCsv(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  let csv = 0;
  let json = 0;
  for (const range of accept.split(",")) {
    const [type = "", ...params] = range.split(";").map((p) => p.trim().toLowerCase());
    const q = quality(params);
    if (type === CSV_MEDIA_TYPE) csv = Math.max(csv, q);
    else if (type === "application/json") json = Math.max(json, q);
  }
  return csv > 0 && csv >= json;
}

function quality(params: readonly string[]): number {
  const q = params.find((p) => p.startsWith("q="));
  if (q === undefined) return 1;
  const value = Number(q.slice(2));
  return Number.isFinite(value) ? value : 0;
}
