/**
 * SQL pieces the consumer checks share, so that every one of them names its entities, finds
 * the configuration in force and reads `io.nats.monitor.*` thresholds the same way.
 *
 * Each check first narrows the window's rows to the ones it fires for, on the stats and
 * opts columns alone, and only then joins names and versions: a large system has tens of
 * thousands of consumers and hundreds of thousands of replicas per epoch, and building a
 * display name or parsing a version for each of them costs more than the check itself.
 * hx.consumers is not used: it was created before the metadata column existed and does not
 * show it, and it joins every epoch before filtering.
 */

/** `[<domain>/]<account>/<stream>/<consumer>`, from `ci` (hx.consumer_ident) and `si` (hx.stream_ident). */
export const CONSUMER_NAME = "checks.consumer_label(si.domain, si.account, si.name, ci.name)";

/**
 * Joins naming the consumer of row `alias` (which has consumer_pk, epoch and
 * leader_server_pk): `ci`, `si`, its leader `l` and that leader's configuration `v`
 * (nats-server version) in force at the epoch.
 */
export function consumerJoins(alias: string): string {
  return `JOIN hx.consumer_ident ci ON ci.consumer_pk = ${alias}.consumer_pk
JOIN hx.stream_ident si ON si.stream_pk = ci.stream_pk
JOIN hx.server_ident l ON l.server_pk = ${alias}.leader_server_pk
ASOF LEFT JOIN hx.server_opts v ON v.server_pk = ${alias}.leader_server_pk AND ${alias}.epoch >= v.epoch`;
}

/**
 * A CTE `monitored`: each consumer's figures from its leader in [ep_from, ep_to] with the
 * configuration in force at that epoch, for consumers that have metadata at all (2.10+).
 */
export const MONITORED_CTE = `monitored AS (
  SELECT s.*, o.metadata, o.priority_policy, o.max_ack_pending, o.max_waiting, o.max_deliver
  FROM hx.consumer_stats s
  ASOF JOIN hx.consumer_opts o ON o.consumer_pk = s.consumer_pk AND s.epoch >= o.epoch
  WHERE s.epoch BETWEEN ep_from AND ep_to AND o.metadata IS NOT NULL
)`;

/**
 * A CTE `replicas`: the consumer replicas in [ep_from, ep_to] that meet `prefilter` (over
 * hx.consumer_replica_stats `r`), with their consumer, their server and whether they are
 * `down`. The prefilter keeps the joins to the few rows a check can fire for.
 *
 * Down is what the leader's view says, plus what it does not say yet. nats-server 2.9.10
 * flags a peer `offline` at once when its server shuts down cleanly, but after a crash only
 * when it gives the server up, about 3 minutes later (measured: 180 s); from 10 s after the
 * crash (or as soon as a new leader is elected, when the leader crashed) the leader already
 * reports the peer not current. A replica that is not current while its server did not
 * answer this epoch is down too (`offline_reported` false).
 */
export function replicasCte(prefilter: string): string {
  return `replicas AS (
  SELECT r.*, i.consumer_pk, i.server_pk, sv.name AS server,
         coalesce(r.offline OR (r.current = false AND NOT list_contains(e.servers_answered, sv.name)), false) AS down
  FROM (SELECT * FROM hx.consumer_replica_stats r WHERE r.epoch BETWEEN ep_from AND ep_to AND (${prefilter})) r
  JOIN hx.epochs e ON e.epoch = r.epoch
  JOIN hx.consumer_replica_ident i ON i.consumer_replica_pk = r.consumer_replica_pk
  JOIN hx.server_ident sv ON sv.server_pk = i.server_pk
)`;
}

/** The rows a replica can be down in: flagged offline, or not current. */
export const MAYBE_DOWN = "r.offline OR r.current = false";

/**
 * Joins naming the consumer of replica row `alias` (from replicasCte) and its leader `l`
 * in that epoch (NULL when the leader did not answer).
 */
export function replicaJoins(alias: string): string {
  return `JOIN hx.consumer_ident ci ON ci.consumer_pk = ${alias}.consumer_pk
JOIN hx.stream_ident si ON si.stream_pk = ci.stream_pk
LEFT JOIN hx.consumer_stats cs ON cs.consumer_pk = ${alias}.consumer_pk AND cs.epoch = ${alias}.epoch
  AND cs.epoch BETWEEN ep_from AND ep_to
LEFT JOIN hx.server_ident l ON l.server_pk = cs.leader_server_pk`;
}

/**
 * A count threshold from consumer metadata as the NATS CLI reads it (Go strconv.Atoi): an
 * optionally signed integer, else NULL (DuckDB's own cast would round "10.5" and accept
 * "1_000", which the CLI refuses). NULL and values <= 0 disable the check.
 */
export function monitorCount(metadata: string, name: string): string {
  const text = `checks.monitor_text(${metadata}, '${name}')`;
  return `CASE WHEN regexp_full_match(${text}, '[+-]?[0-9]+') THEN TRY_CAST(${text} AS BIGINT) END`;
}

/**
 * A metadata threshold that is a count (`num_*` >= threshold, the CLI's comparison), for the
 * checks that compare one consumer figure with one `io.nats.monitor.*-critical` key.
 * Consumers whose leader runs a server older than 2.10 have no metadata and are skipped.
 */
export function countThresholdSql(options: {
  readonly metadataKey: string;
  readonly figure: string;
  readonly extraColumns: string;
}): string {
  const { metadataKey, figure, extraColumns } = options;
  return `
WITH ${MONITORED_CTE},
firing AS (
  SELECT * FROM (SELECT m.*, ${monitorCount("m.metadata", metadataKey)} AS threshold FROM monitored m)
  WHERE threshold > 0 AND ${figure} >= threshold
)
SELECT c.epoch, c.consumer_pk AS entity_pk, ${CONSUMER_NAME} AS entity_name, NULL::VARCHAR AS entity_key,
       l.name AS server, 'critical' AS severity, CAST(c.${figure} AS BIGINT) AS ${figure},
       CAST(c.threshold AS BIGINT) AS threshold${extraColumns}
FROM firing c
${consumerJoins("c")}
WHERE checks.version_at_least(v.version, '2.10.0')`;
}

/**
 * A duration threshold from metadata (Go duration) against the time since `lastColumn`, as
 * of the epoch: fires when that time reached the threshold, or when there never was such
 * an event (the CLI's "No deliveries" / "No acks"). NULL, unparsable and <= 0 disable it.
 */
export function durationThresholdSql(options: {
  readonly metadataKey: string;
  readonly lastColumn: string;
}): string {
  const { metadataKey, lastColumn } = options;
  return `
WITH ${MONITORED_CTE},
limited AS (
  SELECT m.*, checks.monitor_text(m.metadata, '${metadataKey}') AS threshold
  FROM monitored m
  WHERE checks.monitor_text(m.metadata, '${metadataKey}') IS NOT NULL
),
firing AS (
  SELECT * FROM (
    SELECT m.*, checks.go_duration_ns(m.threshold) AS threshold_ns,
           epoch_ns(m.epoch) - epoch_ns(m.${lastColumn}) AS since_ns
    FROM limited m)
  WHERE threshold_ns > 0 AND (${lastColumn} IS NULL OR since_ns >= threshold_ns)
)
SELECT c.epoch, c.consumer_pk AS entity_pk, ${CONSUMER_NAME} AS entity_name, NULL::VARCHAR AS entity_key,
       l.name AS server, 'critical' AS severity, CAST(c.${lastColumn} AS TIMESTAMPTZ) AS ${lastColumn},
       CAST(c.since_ns AS BIGINT) AS since_ns, CAST(c.threshold AS VARCHAR) AS threshold,
       CAST(c.threshold_ns AS BIGINT) AS threshold_ns
FROM firing c
${consumerJoins("c")}
WHERE checks.version_at_least(v.version, '2.10.0')`;
}
