/**
 * The HEALTHZ problems of each server in the window, one row each with its kind and the asset
 * it names, as a CTE (`healthz_problems`) for the checks that read HEALTHZ by kind (server-014,
 * -015, -016).
 *
 * 2.10+ answers the details request with `errors[]`, folded as `TYPE account > stream: error`,
 * so the kind is the leading type and the asset what follows it. 2.9 (or a reply without
 * details) has only the first problem's text in `error`: its kind is read from the server's
 * fixed wording ("JetStream stream '…' is not current", "JetStream account '…' could not be
 * resolved", …) and the asset from the quotes, so the checks also work on 2.9 servers and need
 * no minimum version. `asset` is '' when the problem names none.
 */
export function healthzProblemsCte(from = "ep_from"): string {
  return `
healthz_reported AS (
  SELECT s.epoch, s.server_pk, i.name AS server, s.healthz_status, s.healthz_errors IS NOT NULL AS typed,
         unnest(CASE
           WHEN s.healthz_errors IS NOT NULL THEN s.healthz_errors
           WHEN s.healthz_status <> 'ok' AND s.healthz_error IS NOT NULL THEN [s.healthz_error]
           ELSE []::VARCHAR[] END) AS problem
  FROM hx.server_stats s
  JOIN hx.server_ident i ON i.server_pk = s.server_pk
  WHERE s.epoch BETWEEN ${from} AND ep_to AND s.healthz_status IS NOT NULL
),
healthz_problems AS (
  SELECT epoch, server_pk, server, healthz_status, problem,
         CASE
           WHEN typed THEN regexp_extract(problem, '^([A-Z_]+)', 1)
           WHEN problem LIKE 'JetStream stream %' THEN 'STREAM'
           WHEN problem LIKE 'JetStream consumer %' THEN 'CONSUMER'
           WHEN problem LIKE 'JetStream account %' THEN 'ACCOUNT'
           WHEN problem ILIKE '%jetstream%' THEN 'JETSTREAM'
           ELSE 'CONNECTION'
         END AS kind,
         CASE
           WHEN typed THEN regexp_extract(problem, '^[A-Z_]+ ([^:]+):', 1)
           ELSE regexp_extract(problem, '''([^'']+)''', 1)
         END AS asset
  FROM healthz_reported
)`;
}

/** {@link healthzProblemsCte} over the epochs of the window. */
export const HEALTHZ_PROBLEMS_CTE = healthzProblemsCte();
