/**
 * The stream figures consumer-004 and consumer-005 compare a consumer's delivered position
 * with: the stream leader's (hx.stream_stats) and the consumer leader's own replica of the
 * stream. The consumer leader delivers from its own replica and its JSZ reply reads that
 * replica's state just before the consumer's, so the two agree; the stream leader's reply
 * is taken a few milliseconds apart, in which a busy stream moves on. Requiring both keeps
 * that skew from raising a critical finding.
 */
import { CONSUMERS_CTE } from "./consumer-sql.ts";

export const STREAM_POSITION_CTES = `${CONSUMERS_CTE},
stream_figures AS (
  SELECT s.epoch, s.stream_pk, s.first_seq, s.last_seq, l.name AS stream_leader
  FROM hx.stream_stats s
  LEFT JOIN hx.server_ident l ON l.server_pk = s.leader_server_pk
  WHERE s.epoch BETWEEN ep_from AND ep_to
),
own_copies AS (
  SELECT r.epoch, i.stream_pk, i.server_pk, r.first_seq, r.last_seq
  FROM hx.stream_replica_stats r
  JOIN hx.stream_replica_ident i ON i.stream_replica_pk = r.stream_replica_pk
  WHERE r.epoch BETWEEN ep_from AND ep_to AND r.answered
),
positions AS (
  SELECT c.*, st.first_seq AS stream_first_seq, st.last_seq AS stream_last_seq, st.stream_leader,
         oc.first_seq AS leader_copy_first_seq, oc.last_seq AS leader_copy_last_seq
  FROM consumers c
  JOIN stream_figures st ON st.epoch = c.epoch AND st.stream_pk = c.stream_pk
  LEFT JOIN own_copies oc ON oc.epoch = c.epoch AND oc.stream_pk = c.stream_pk AND oc.server_pk = c.leader_server_pk
)`;
