/**
 * SQL pieces the consumer checks share, so that every one of them names its entities, finds
 * the configuration in force and reads `io.nats.monitor.*` thresholds the same way.
 */

/**
 * A CTE `consumers`: each consumer with figures from its leader in [ep_from, ep_to], with its
 * display name (`<account>/<stream>/<consumer>`), the leader's name, the configuration in
 * force (metadata, priority policy, replicas) and the leader's nats-server version at that
 * epoch. Built on the tables, not on hx.consumers: that view was created before the
 * metadata column existed and does not show it, and it joins every epoch before filtering.
 */
export const CONSUMERS_CTE = `consumers AS (
  SELECT s.*, si.account || '/' || si.name || '/' || ci.name AS entity_name, ci.stream_pk,
         l.name AS leader, o.metadata, o.priority_policy, o.replicas AS configured_replicas,
         o.max_ack_pending, o.max_waiting, o.max_deliver, v.version
  FROM hx.consumer_stats s
  JOIN hx.consumer_ident ci ON ci.consumer_pk = s.consumer_pk
  JOIN hx.stream_ident si ON si.stream_pk = ci.stream_pk
  JOIN hx.server_ident l ON l.server_pk = s.leader_server_pk
  ASOF LEFT JOIN hx.consumer_opts o ON o.consumer_pk = s.consumer_pk AND s.epoch >= o.epoch
  ASOF LEFT JOIN hx.server_opts v ON v.server_pk = s.leader_server_pk AND s.epoch >= v.epoch
  WHERE s.epoch BETWEEN ep_from AND ep_to
)`;

/**
 * A CTE `replicas`: each consumer replica in [ep_from, ep_to] with its display name
 * (`<account>/<stream>/<consumer>@<server>`), its server, the consumer leader reporting on it
 * and whether it is `down`.
 *
 * Down is what the leader's view says, plus what it does not say yet. nats-server 2.9.10
 * flags a peer `offline` at once when its server shuts down cleanly, but after a crash only
 * when it gives the server up, about 3 minutes later (measured: 180 s); from 10 s after the
 * crash (or as soon as a new leader is elected, when the leader crashed) the leader already
 * reports the peer not current. A replica that is not current while its server did not
 * answer this epoch is down too (`offline_reported` false).
 */
export const REPLICAS_CTE = `replicas AS (
  SELECT r.*, i.consumer_pk, i.server_pk, sv.name AS server,
         si.account || '/' || si.name || '/' || ci.name || '@' || sv.name AS entity_name,
         l.name AS leader, cs.replicas_offline AS leader_replicas_offline,
         coalesce(r.offline OR (r.current = false AND NOT list_contains(e.servers_answered, sv.name)), false) AS down
  FROM hx.consumer_replica_stats r
  JOIN hx.epochs e ON e.epoch = r.epoch
  JOIN hx.consumer_replica_ident i ON i.consumer_replica_pk = r.consumer_replica_pk
  JOIN hx.consumer_ident ci ON ci.consumer_pk = i.consumer_pk
  JOIN hx.stream_ident si ON si.stream_pk = ci.stream_pk
  JOIN hx.server_ident sv ON sv.server_pk = i.server_pk
  LEFT JOIN hx.consumer_stats cs ON cs.consumer_pk = i.consumer_pk AND cs.epoch = r.epoch
  LEFT JOIN hx.server_ident l ON l.server_pk = cs.leader_server_pk
  WHERE r.epoch BETWEEN ep_from AND ep_to
)`;

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
WITH ${CONSUMERS_CTE},
limited AS (
  SELECT c.*, ${monitorCount("c.metadata", metadataKey)} AS threshold
  FROM consumers c
  WHERE checks.version_at_least(c.version, '2.10.0')
)
SELECT c.epoch, c.consumer_pk AS entity_pk, c.entity_name, NULL::VARCHAR AS entity_key, c.leader AS server,
       'critical' AS severity, CAST(c.${figure} AS BIGINT) AS ${figure}, CAST(c.threshold AS BIGINT) AS threshold${extraColumns}
FROM limited c
WHERE c.threshold > 0 AND c.${figure} >= c.threshold`;
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
WITH ${CONSUMERS_CTE},
limited AS (
  SELECT c.*, checks.monitor_text(c.metadata, '${metadataKey}') AS threshold,
         checks.go_duration_ns(checks.monitor_text(c.metadata, '${metadataKey}')) AS threshold_ns,
         epoch_ns(c.epoch) - epoch_ns(c.${lastColumn}) AS since_ns
  FROM consumers c
  WHERE checks.version_at_least(c.version, '2.10.0')
)
SELECT c.epoch, c.consumer_pk AS entity_pk, c.entity_name, NULL::VARCHAR AS entity_key, c.leader AS server,
       'critical' AS severity, CAST(c.${lastColumn} AS TIMESTAMPTZ) AS ${lastColumn},
       CAST(c.since_ns AS BIGINT) AS since_ns, CAST(c.threshold AS VARCHAR) AS threshold,
       CAST(c.threshold_ns AS BIGINT) AS threshold_ns
FROM limited c
WHERE c.threshold_ns > 0 AND (c.${lastColumn} IS NULL OR c.since_ns >= c.threshold_ns)`;
}
