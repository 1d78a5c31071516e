import type { Check } from "../check.ts";

/**
 * The ratio is interior deletes over the sequence span the stream holds (messages plus
 * deletes). It only counts from p_ratio_min_deleted deletes on: a handful of deletes in a
 * small stream is a high ratio and no memory pressure at all.
 */
export const optSys018: Check = {
  code: "opt-sys-018",
  name: "High Interior Deletes on Stream",
  description:
    "The stream holds a huge number of interior deletes (messages removed from the middle of its sequence range by deletes, KV updates beyond the history, per-subject limits or work-queue acks), or they make up more than 90% of its sequence range. The server tracks every such gap in memory and in each block's index, so memory, start-up and snapshot times grow with them, and replicas must catch up on the gaps too.",
  remediation:
    "Let the stream's first sequence move past the gaps: the server counts a gap as deleted only while it lies between the first and last sequence. Give the stream a retention limit (`nats stream edit <stream> --max-age=…` or `--max-msgs`), or purge what is no longer needed (`nats stream purge <stream> --seq=N` keeps everything from N on). For a KV bucket, a TTL (`max_age`) lets old revisions and delete markers expire. Avoid deleting single messages at a high rate, and drain a work queue roughly in order.",
  scope: "stream",
  entityType: "stream",
  severity: "warning",
  category: "saturation",
  optimization: true,
  lookbackSeconds: 3600,
  params: [
    { name: "p_max_deleted", default: 100_000_000, description: "Interior deletes above which it fires." },
    {
      name: "p_max_deleted_pct",
      default: 90,
      description: "Interior deletes as a percentage of messages plus deletes above which it fires.",
    },
    {
      name: "p_ratio_min_deleted",
      default: 10_000,
      description: "Interior deletes a stream needs before the percentage counts.",
    },
  ],
  detailColumns: [
    { name: "messages", type: "BIGINT", description: "Messages stored." },
    { name: "num_deleted", type: "BIGINT", description: "Interior deletes." },
    {
      name: "deleted_pct",
      type: "DOUBLE",
      description: "num_deleted as a percentage of messages plus num_deleted.",
    },
  ],
  sql: `
WITH latest AS (
  SELECT s.stream_pk, max(s.epoch) AS epoch
  FROM hx.stream_stats s WHERE s.epoch BETWEEN ep_from AND ep_to GROUP BY s.stream_pk
),
gappy AS (
  SELECT s.epoch, s.stream_pk, s.leader_server_pk, s.messages, s.num_deleted
  FROM latest l
  JOIN hx.stream_stats s ON s.stream_pk = l.stream_pk AND s.epoch = l.epoch
  WHERE s.epoch BETWEEN ep_from AND ep_to AND s.num_deleted > 0
    AND (s.num_deleted > p_max_deleted
         OR (s.num_deleted >= p_ratio_min_deleted
             AND s.num_deleted * 100.0 > p_max_deleted_pct * (s.messages + s.num_deleted)))
)
SELECT g.epoch, g.stream_pk AS entity_pk, checks.stream_label(si.domain, si.account, si.name) AS entity_name, NULL::VARCHAR AS entity_key,
       sv.name AS server, 'warning' AS severity, g.messages, g.num_deleted,
       CAST(100.0 * g.num_deleted / (g.messages + g.num_deleted) AS DOUBLE) AS deleted_pct
FROM gappy g
JOIN hx.stream_ident si ON si.stream_pk = g.stream_pk
LEFT JOIN hx.server_ident sv ON sv.server_pk = g.leader_server_pk`,
};
