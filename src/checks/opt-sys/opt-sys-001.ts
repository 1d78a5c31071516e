import type { Check } from "../check.ts";

export const optSys001: Check = {
  code: "opt-sys-001",
  name: "Streams Without Limits",
  description:
    "A stream has no retention bound of any kind: no message limit, no byte limit, no maximum age and no per-subject limit. Nothing but its consumers (work-queue or interest retention) or a manual purge ever removes its messages, so it grows until it meets the account's or the server's JetStream storage limit, and then publishes to it, and to every other stream sharing that storage, fail.",
  remediation:
    "Give the stream at least one bound that matches how long its data is useful: `nats stream edit <stream> --max-age=7d`, `--max-bytes=10GiB`, `--max-msgs=N` or `--max-msgs-per-subject=N` (or `max_age`, `max_bytes`, `max_msgs`, `max_msgs_per_subject` in its configuration). Setting account JetStream limits (`max_file`, `max_mem` in the account's `jetstream` block) also caps what all its streams may take together. A stream that must keep everything can be sealed once complete (`nats stream seal <stream>`).",
  scope: "stream",
  entityType: "stream",
  severity: "info",
  category: "consistency",
  optimization: true,
  lookbackSeconds: 3600,
  params: [],
  detailColumns: [
    { name: "retention", type: "VARCHAR", description: "Retention policy: limits, interest or workqueue." },
    { name: "storage", type: "VARCHAR", description: "Storage: file or memory." },
    { name: "messages", type: "BIGINT", description: "Messages stored at that epoch." },
    { name: "bytes", type: "BIGINT", description: "Bytes stored at that epoch." },
  ],
  // nats-server stores an unset (0) message, byte and per-subject limit as -1; both mean
  // unlimited, as a max_age of 0 does. The configuration is the one in force at the stream's
  // latest epoch in the window.
  sql: `
WITH latest AS (
  SELECT s.stream_pk, max(s.epoch) AS epoch
  FROM hx.stream_stats s
  WHERE s.epoch BETWEEN ep_from AND ep_to
  GROUP BY s.stream_pk
), unbounded AS (
  SELECT l.epoch, l.stream_pk, o.retention, o.storage
  FROM latest l
  ASOF JOIN hx.stream_opts o ON o.stream_pk = l.stream_pk AND l.epoch >= o.epoch
  WHERE o.max_msgs <= 0 AND o.max_bytes <= 0 AND o.max_age_ns = 0 AND o.max_msgs_per_subject <= 0
    AND NOT coalesce(o.sealed, false)
)
SELECT u.epoch, u.stream_pk AS entity_pk, checks.stream_label(si.domain, si.account, si.name) AS entity_name,
       NULL::VARCHAR AS entity_key, ld.name AS server, 'info' AS severity,
       u.retention, u.storage, CAST(s.messages AS BIGINT) AS messages, CAST(s.bytes AS BIGINT) AS bytes
FROM unbounded u
JOIN hx.stream_stats s ON s.stream_pk = u.stream_pk AND s.epoch = u.epoch AND s.epoch BETWEEN ep_from AND ep_to
JOIN hx.stream_ident si ON si.stream_pk = u.stream_pk
LEFT JOIN hx.server_ident ld ON ld.server_pk = s.leader_server_pk`,
};
