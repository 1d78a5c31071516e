import { healthzProblemsCte } from "./healthz-problems.ts";

/** How far back the checks read HEALTHZ: an hour, or twice the wait when that is longer. */
const LOOKBACK = "to_microseconds(CAST(greatest(3600, 2 * p_min_seconds) * 1e6 AS BIGINT))";

/**
 * What HEALTHZ reports for a moment is not a failure: a replica catches up after every
 * creation, election and restart, and a restarted server catches up with the meta leader. The
 * checks that read HEALTHZ this way (server-014, -015) count a problem once the server has kept
 * reporting it over at least p_min_seconds without saying it recovered in between. These are
 * their CTEs (to follow `WITH`), ending in `persisting`: one row per epoch of the window, server
 * and asset still unhealthy at that epoch and reported over p_min_seconds, with `server`,
 * `healthz_status`, `asset`, `kind`, the latest `problem` and when it was `first_reported`.
 *
 * `named` is a query over `healthz_problems` giving what each answer reported about each asset:
 * `epoch, server_pk, asset, kind, problem` (`problem` of any type, NULL never). `complete` is
 * an SQL condition over the answer `s` (its `hx.server_stats` row) and `kinds` (the kinds of
 * its problems, NULL when it has none) that holds when the answer would have named every
 * unhealthy asset of the check's kind: such an answer that does not name an asset clears it.
 * An answer that is not complete neither clears an asset it does not name nor counts it.
 * Within the run since an asset was last cleared, it counts once its latest report is
 * p_min_seconds after its first.
 */
export function persistingHealthzCtes(named: string, complete: string): string {
  return `
${healthzProblemsCte(`ep_from - ${LOOKBACK}`).trim()},
named AS (
  ${named.trim()}
), answers AS (
  SELECT s.epoch, s.server_pk, i.name AS server, s.healthz_status,
         coalesce(${complete.trim()}, false) AS complete
  FROM hx.server_stats s
  JOIN hx.server_ident i ON i.server_pk = s.server_pk
  LEFT JOIN (SELECT epoch, server_pk, list(kind) AS kinds FROM healthz_problems GROUP BY epoch, server_pk) k
    ON k.epoch = s.epoch AND k.server_pk = s.server_pk
  WHERE s.epoch BETWEEN ep_from - ${LOOKBACK} AND ep_to AND s.healthz_status IS NOT NULL
    AND s.server_pk IN (SELECT server_pk FROM named)
), states AS (
  SELECT a.epoch, a.server_pk, a.server, a.healthz_status, x.asset, x.kind, n.problem,
         n.asset IS NULL AND a.complete AS cleared
  FROM answers a
  JOIN (SELECT DISTINCT server_pk, asset, kind FROM named) x ON x.server_pk = a.server_pk
  LEFT JOIN named n ON n.server_pk = a.server_pk AND n.epoch = a.epoch AND n.asset = x.asset
), runs AS (
  SELECT *, count(*) FILTER (WHERE cleared) OVER (PARTITION BY server_pk, asset ORDER BY epoch) AS run
  FROM states
), spans AS (
  SELECT epoch, server_pk, server, healthz_status, asset, kind, cleared,
         min(epoch) FILTER (WHERE problem IS NOT NULL) OVER w AS first_reported,
         max(epoch) FILTER (WHERE problem IS NOT NULL) OVER w AS last_reported,
         last_value(problem IGNORE NULLS) OVER w AS problem
  FROM runs
  WINDOW w AS (PARTITION BY server_pk, asset, run ORDER BY epoch ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
), persisting AS (
  SELECT * FROM spans
  WHERE epoch BETWEEN ep_from AND ep_to AND NOT cleared
    AND date_diff('millisecond', first_reported, last_reported) >= p_min_seconds * 1000
)`;
}
