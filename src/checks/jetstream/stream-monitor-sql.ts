/**
 * SQL pieces shared by the stream checks driven by `io.nats.monitor.*` metadata
 * (jetstream-017 … 025) and by the mirror checks. Plain text spliced into each check's
 * macro body: the checks stay self-contained macros, without extra helper macros.
 */

/**
 * The streams of the window whose leader runs 2.10 or later (stream metadata came in
 * 2.10.0) and whose metadata holds at least one io.nats.monitor.* key: all hx.streams
 * columns. The version is the one in force for the leader at that epoch.
 */
export const MONITORED_STREAMS = `
SELECT s.*
FROM hx.streams s
ASOF JOIN hx.server_opts v ON v.server_pk = s.leader_server_pk AND s.epoch >= v.epoch
WHERE s.epoch BETWEEN ep_from AND ep_to
  AND s.metadata LIKE '%"io.nats.monitor.%'
  AND checks.version_at_least(v.version, '2.10.0')`;

/**
 * An integer io.nats.monitor.* threshold as BIGINT, NULL (disabled) when absent, not a
 * number, or not above 0: natscli treats a value <= 0 as "not set".
 */
export function countThreshold(key: string): string {
  return `CASE WHEN checks.monitor_value(metadata, '${key}') > 0
  THEN TRY_CAST(checks.monitor_value(metadata, '${key}') AS BIGINT) END`;
}

/** A Go-duration io.nats.monitor.* threshold in nanoseconds; NULL (disabled) when absent, unparsable or not above 0. */
export function durationThreshold(key: string): string {
  return `CASE WHEN checks.go_duration_ns(checks.monitor_text(metadata, '${key}')) > 0
  THEN checks.go_duration_ns(checks.monitor_text(metadata, '${key}')) END`;
}

/**
 * The mirrors of the window with their origin's figures in the same epoch: the origin is
 * the stream of that name in the mirror's account, in the mirror's domain when it has one
 * there (a mirror of another domain's stream names it the same way). Origin columns are
 * NULL when the origin is not seen (another account, or its leader did not answer).
 * `mirrors` is a CTE name with the hx.streams columns of mirror streams only.
 */
export function mirrorsWithOrigin(mirrors: string): string {
  return `
SELECT m.*, o.stream AS origin, o.last_seq AS origin_last_seq, o.last_ts AS origin_last_ts,
       o.messages AS origin_messages
FROM ${mirrors} m
LEFT JOIN (
  SELECT epoch, domain, account, stream, last_seq, last_ts, messages
  FROM hx.streams WHERE epoch BETWEEN ep_from AND ep_to
) o
  ON o.epoch = m.epoch AND o.account = m.account AND o.stream = m.mirror
QUALIFY row_number() OVER (PARTITION BY m.epoch, m.stream_pk ORDER BY (o.domain = m.domain) DESC NULLS LAST, o.domain) = 1`;
}

/**
 * The severity of a value against warn/critical bounds (each NULL when disabled), as
 * natscli reads them: above the bounds is bad, unless both are set and critical is below
 * warning, which means "too few" and flips the comparisons to <=. NULL: within bounds.
 */
export function boundsSeverity(value: string, warn: string, critical: string): string {
  return `CASE
  WHEN ${critical} IS NOT NULL AND (CASE WHEN ${critical} < ${warn} THEN ${value} <= ${critical} ELSE ${value} >= ${critical} END) THEN 'critical'
  WHEN ${warn} IS NOT NULL AND (CASE WHEN ${critical} < ${warn} THEN ${value} <= ${warn} ELSE ${value} >= ${warn} END) THEN 'warning'
END`;
}

/** 'below' when the bounds mean "too few" (critical set under warning), else 'above'. */
export function boundsDirection(warn: string, critical: string): string {
  return `CASE WHEN ${critical} < ${warn} THEN 'below' ELSE 'above' END`;
}
