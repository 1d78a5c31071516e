import type { Check } from "../check.ts";

/**
 * A bucket is the stream KV_<bucket> (hx.kv_buckets); its findings are about that stream.
 * Read at the latest epoch in the window holding it.
 */
export const optSys020: Check = {
  code: "opt-sys-020",
  name: "KV Buckets Without max_age",
  description:
    "A KV bucket has no TTL (max_age 0) and has accumulated many interior deletes: revisions pushed out by the history limit, and keys deleted or purged, leave gaps and delete markers that nothing ever expires. The bucket's stream keeps growing in sequence range, the server tracks every gap in memory, and watchers and `keys` listings replay the markers of keys long gone.",
  remediation:
    "Give the bucket a TTL when its values are not meant to live forever: `nats kv edit <bucket> --ttl=24h` (or `max_age` on the KV_<bucket> stream), so old revisions and delete markers expire and the stream's first sequence moves past the gaps. For buckets that must keep values, remove the markers of deleted keys now and then (`nats kv compact <bucket>`, the clients' purge-deletes), and keep the history (`--history`) as small as the application allows.",
  scope: "kv bucket",
  entityType: "stream",
  severity: "info",
  category: "saturation",
  optimization: true,
  lookbackSeconds: 3600,
  params: [
    {
      name: "p_min_deleted",
      default: 100_000,
      description: "Interior deletes from which a bucket without TTL fires.",
    },
  ],
  detailColumns: [
    { name: "bucket", type: "VARCHAR", description: "Bucket name (the stream name without KV_)." },
    {
      name: "values_stored",
      type: "BIGINT",
      description: "Messages of the bucket's stream: values and markers.",
    },
    { name: "num_deleted", type: "BIGINT", description: "Interior deletes of the bucket's stream." },
  ],
  sql: `
WITH buckets AS (
  SELECT i.stream_pk, i.domain, i.account, i.name, substr(i.name, 4) AS bucket
  FROM hx.stream_ident i WHERE starts_with(i.name, 'KV_') AND length(i.name) > 3
),
latest AS (
  SELECT s.stream_pk, max(s.epoch) AS epoch
  FROM hx.stream_stats s
  WHERE s.epoch BETWEEN ep_from AND ep_to AND s.stream_pk IN (SELECT stream_pk FROM buckets)
  GROUP BY s.stream_pk
),
untimed AS (
  SELECT s.epoch, s.stream_pk, s.leader_server_pk, s.messages, s.num_deleted
  FROM latest l
  JOIN hx.stream_stats s ON s.stream_pk = l.stream_pk AND s.epoch = l.epoch
  ASOF JOIN hx.stream_opts o ON o.stream_pk = s.stream_pk AND s.epoch >= o.epoch
  WHERE s.epoch BETWEEN ep_from AND ep_to AND o.max_age_ns = 0 AND s.num_deleted >= p_min_deleted
)
SELECT u.epoch, u.stream_pk AS entity_pk, checks.stream_label(b.domain, b.account, b.name) AS entity_name, NULL::VARCHAR AS entity_key,
       sv.name AS server, 'info' AS severity, b.bucket, u.messages AS values_stored, u.num_deleted
FROM untimed u
JOIN buckets b ON b.stream_pk = u.stream_pk
LEFT JOIN hx.server_ident sv ON sv.server_pk = u.leader_server_pk`,
};
