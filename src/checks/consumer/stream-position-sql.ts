/**
 * The stream figures consumer-004 and consumer-005 compare a consumer's delivered position
 * with: the stream leader's (hx.stream_stats) and the consumer leader's own replica of the
 * stream. The consumer leader delivers from its own replica and its JSZ reply reads that
 * replica's state just before the consumer's, so the two agree; the stream leader's reply
 * is taken a few milliseconds apart, in which a busy stream moves on. Requiring both keeps
 * that skew from raising a critical finding.
 */
import { CONSUMER_NAME, consumerJoins } from "./consumer-sql.ts";

/**
 * The check's SELECT: consumers whose delivered position meets `condition(delivered, first, last)`
 * against the stream leader's figures and, where it holds a replica, the consumer leader's
 * own copy. `columns` are the detail columns, over `p` (delivered_stream_seq,
 * stream_first_seq, stream_last_seq, leader_copy_first_seq, leader_copy_last_seq) and
 * `sl` (the stream leader's hx.server_ident row). With `unfilteredOnly`, consumers whose
 * configuration in force at the epoch has a `filter_subject` or `filter_subjects` are left out.
 */
export function streamPositionSql(options: {
  readonly condition: (delivered: string, firstSeq: string, lastSeq: string) => string;
  readonly columns: string;
  readonly unfilteredOnly?: boolean;
}): string {
  const { condition, columns, unfilteredOnly = false } = options;
  // The configuration is looked up for the few candidates only; a consumer without a
  // recorded configuration is judged as before.
  const judged = unfilteredOnly
    ? `SELECT c.* FROM candidates c
  ASOF LEFT JOIN hx.consumer_opts o ON o.consumer_pk = c.consumer_pk AND c.epoch >= o.epoch
  WHERE coalesce(o.filter_subject, '') = '' AND coalesce(len(o.filter_subjects), 0) = 0`
    : "SELECT * FROM candidates";
  return `
WITH candidates AS (
  SELECT s.epoch, s.consumer_pk, s.leader_server_pk, s.delivered_stream_seq, ci.stream_pk,
         st.first_seq AS stream_first_seq, st.last_seq AS stream_last_seq, st.leader_server_pk AS stream_leader_pk
  FROM hx.consumer_stats s
  JOIN hx.consumer_ident ci ON ci.consumer_pk = s.consumer_pk
  JOIN hx.stream_stats st ON st.stream_pk = ci.stream_pk AND st.epoch = s.epoch AND st.epoch BETWEEN ep_from AND ep_to
  WHERE s.epoch BETWEEN ep_from AND ep_to AND ${condition("s.delivered_stream_seq", "st.first_seq", "st.last_seq")}
),
judged AS (
  ${judged}
),
positions AS (
  SELECT c.*, oc.first_seq AS leader_copy_first_seq, oc.last_seq AS leader_copy_last_seq
  FROM judged c
  LEFT JOIN hx.stream_replica_ident ri ON ri.stream_pk = c.stream_pk AND ri.server_pk = c.leader_server_pk
  LEFT JOIN hx.stream_replica_stats oc ON oc.stream_replica_pk = ri.stream_replica_pk AND oc.epoch = c.epoch
    AND oc.epoch BETWEEN ep_from AND ep_to AND oc.answered
)
SELECT p.epoch, p.consumer_pk AS entity_pk, ${CONSUMER_NAME} AS entity_name, NULL::VARCHAR AS entity_key,
       l.name AS server, 'critical' AS severity, ${columns}
FROM positions p
${consumerJoins("p")}
LEFT JOIN hx.server_ident sl ON sl.server_pk = p.stream_leader_pk
WHERE p.leader_copy_first_seq IS NULL
   OR ${condition("p.delivered_stream_seq", "p.leader_copy_first_seq", "p.leader_copy_last_seq")}`;
}
