/**
 * SQL pieces shared by the stream checks driven by `io.nats.monitor.*` metadata
 * (jetstream-017 … 025) and by the mirror checks. Plain text spliced into each check's
 * macro body: the checks stay self-contained macros, without extra helper macros.
 *
 * They read the hx tables rather than the hx.streams view: the view joins every stream's
 * configuration as of each epoch, which cost more than all the rest of these checks on the
 * medium and large simulator profiles, while only the streams that carry monitor metadata,
 * or mirror another, need their configuration at all.
 */

/** The hx.stream_stats columns these checks read: fewer columns make the joins on large systems cheaper. */
const STATS_COLUMNS = `epoch, stream_pk, leader_server_pk, messages, num_subjects, last_seq, last_ts,
       mirror_lag, mirror_active_ns, sources_count`;

/**
 * The configuration in force for the streams of `stats` (a query over hx.stream_stats
 * rows): those rows plus identity, leader name and the stream_opts row of latest epoch at
 * or before theirs. That row is found by its epoch first (a plain max): picking the whole
 * row per stream with a window or arg_max carries the metadata and source lists through
 * the aggregate and costs ten times more on 20,000 streams.
 */
function withConfig(stats: string): string {
  return `
SELECT s.*, i.domain, i.account, i.name AS stream, l.name AS leader,
       o.metadata, o.mirror, o.sources, o.replicas
FROM (${stats}) s
JOIN (
  SELECT s.epoch, s.stream_pk, max(o.epoch) AS opts_epoch
  FROM (${stats}) s JOIN hx.stream_opts o ON o.stream_pk = s.stream_pk AND o.epoch <= s.epoch
  GROUP BY s.epoch, s.stream_pk
) p ON p.epoch = s.epoch AND p.stream_pk = s.stream_pk
JOIN hx.stream_opts o ON o.stream_pk = p.stream_pk AND o.epoch = p.opts_epoch
JOIN hx.stream_ident i ON i.stream_pk = s.stream_pk
LEFT JOIN hx.server_ident l ON l.server_pk = s.leader_server_pk`;
}

/**
 * The streams of the window whose metadata in force holds at least one io.nats.monitor.*
 * key and whose leader runs 2.10 or later (stream metadata came in 2.10.0): the
 * STATS_COLUMNS, plus domain, account, stream, leader, metadata, mirror, sources
 * and replicas, plus one column per entry of `thresholds` (name → SQL over `metadata`),
 * each evaluated once per row. The version is the one in force for the leader at that epoch.
 */
export function monitoredStreams(thresholds: Readonly<Record<string, string>>): string {
  const fields = Object.entries(thresholds).map(([name, sql]) => `"${name}" := ${sql}`);
  return `
WITH streams AS (${withConfig(`
  SELECT ${STATS_COLUMNS} FROM hx.stream_stats
  WHERE epoch BETWEEN ep_from AND ep_to
    AND stream_pk IN (SELECT stream_pk FROM hx.stream_opts WHERE metadata LIKE '%"io.nats.monitor.%')`)}
),
-- The servers running 2.10 or later at each epoch of the window: a version per server and
-- epoch, not per stream.
recent_servers AS (
  SELECT e.epoch, v.server_pk
  FROM hx.epochs e JOIN hx.server_opts v ON v.epoch <= e.epoch
  WHERE e.epoch BETWEEN ep_from AND ep_to
  GROUP BY e.epoch, v.server_pk
  HAVING checks.version_at_least(arg_max(v.version, v.epoch), '2.10.0')
),
-- Thresholds are read once per distinct metadata text, from the configurations (streams
-- set up alike share one; Go durations cost a regular expression each). DuckDB substitutes
-- a computed column's expression into every later reference, so a threshold used in five
-- comparisons would be read five times; a one-row unnest is a boundary it does not look through.
thresholds AS (
  SELECT metadata_, thresholds_.*
  FROM (
    SELECT metadata AS metadata_, unnest([struct_pack(${fields.join(", ")})]) AS thresholds_
    FROM (SELECT DISTINCT metadata FROM hx.stream_opts WHERE metadata LIKE '%"io.nats.monitor.%')
  )
)
SELECT s.*, t.* EXCLUDE (metadata_)
FROM streams s
JOIN recent_servers r ON r.epoch = s.epoch AND r.server_pk = s.leader_server_pk
JOIN thresholds t ON t.metadata_ = s.metadata`;
}

/** The mirror streams of the window (they report mirror state), with the columns of monitoredStreams but the thresholds. */
export const MIRROR_STREAMS = withConfig(`
  SELECT ${STATS_COLUMNS} FROM hx.stream_stats
  WHERE epoch BETWEEN ep_from AND ep_to AND mirror_lag IS NOT NULL`);

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
 * `mirrors` (a CTE name, rows with the columns of monitoredStreams) with their origin's figures
 * in the same epoch: the origin is the stream of the mirror's name in the mirror's
 * account, in the mirror's domain when there is one there (a mirror of another domain's
 * stream names it the same way). Origin columns are NULL when the origin is not seen
 * (another account, or its leader did not answer).
 */
export function mirrorsWithOrigin(mirrors: string): string {
  return `
SELECT m.*, o.name AS origin, o.last_seq AS origin_last_seq, o.last_ts AS origin_last_ts
FROM ${mirrors} m
LEFT JOIN (
  SELECT s.epoch, i.domain, i.account, i.name, s.last_seq, s.last_ts
  FROM hx.stream_stats s JOIN hx.stream_ident i ON i.stream_pk = s.stream_pk
  WHERE s.epoch BETWEEN ep_from AND ep_to AND i.name IN (SELECT mirror FROM ${mirrors})
) o
  ON o.epoch = m.epoch AND o.account = m.account AND o.name = m.mirror
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
