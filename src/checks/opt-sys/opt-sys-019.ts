import type { Check } from "../check.ts";

/**
 * The rate is over the window: messages added (the rise of last_seq from epoch to epoch; a
 * stream created again, with a new `created`, counts all of its new sequence) per second
 * between the first and the latest epoch holding the stream, so it needs two epochs. The
 * window in force is the latest epoch's configuration.
 */
export const optSys019: Check = {
  code: "opt-sys-019",
  name: "Large Deduplication Window",
  description:
    "A busy stream (10 messages a second or more over the window) keeps a duplicate window of an hour or more. The stream leader remembers the Nats-Msg-Id of every message published with one for the whole window, in memory and in the stream's state, so a long window on a busy stream holds hundreds of thousands of ids, costs memory on every replica and slows recovery. Info from 60 minutes, warning from 360.",
  remediation:
    "Set the window to the longest time a publisher may retry the same message, usually seconds to minutes (default 2 minutes): `nats stream edit <stream> --dupe-window=2m`. Publishers that need longer idempotence should deduplicate in the application (for example a KV bucket of processed ids with a TTL) rather than in the stream.",
  scope: "stream",
  entityType: "stream",
  severity: "dynamic",
  category: "saturation",
  optimization: true,
  lookbackSeconds: 3600,
  params: [
    {
      name: "p_warn_window_minutes",
      default: 60,
      description: "Duplicate window, in minutes, from which it fires as info.",
    },
    {
      name: "p_crit_window_minutes",
      default: 360,
      description: "Duplicate window, in minutes, from which it fires as warning.",
    },
    {
      name: "p_min_rate_per_sec",
      default: 10,
      description: "Messages a second over the window from which a stream counts as busy.",
    },
  ],
  detailColumns: [
    { name: "duplicate_window_minutes", type: "DOUBLE", description: "Duplicate window in force, minutes." },
    { name: "msgs_per_sec", type: "DOUBLE", description: "Messages added per second over the window." },
  ],
  sql: `
WITH steps AS (
  SELECT s.epoch, s.stream_pk, s.leader_server_pk,
         CASE WHEN lag(s.last_seq) OVER w IS NULL THEN NULL
              WHEN o.created IS DISTINCT FROM lag(o.created) OVER w THEN s.last_seq
              ELSE greatest(s.last_seq - lag(s.last_seq) OVER w, 0) END AS added
  FROM hx.stream_stats s
  ASOF LEFT JOIN hx.stream_opts o ON o.stream_pk = s.stream_pk AND s.epoch >= o.epoch
  WHERE s.epoch BETWEEN ep_from AND ep_to
  WINDOW w AS (PARTITION BY s.stream_pk ORDER BY s.epoch)
),
rates AS (
  SELECT stream_pk, max(epoch) AS epoch, arg_max(leader_server_pk, epoch) AS leader_server_pk,
         sum(added) * 1000.0 / date_diff('millisecond', min(epoch), max(epoch)) AS msgs_per_sec
  FROM steps GROUP BY stream_pk
  HAVING count(*) > 1
),
busy AS (
  SELECT r.*, o.duplicate_window_ns / 60e9 AS window_minutes
  FROM rates r
  ASOF JOIN hx.stream_opts o ON o.stream_pk = r.stream_pk AND r.epoch >= o.epoch
  WHERE r.msgs_per_sec >= p_min_rate_per_sec AND o.duplicate_window_ns >= p_warn_window_minutes * 60e9
)
SELECT b.epoch, b.stream_pk AS entity_pk, checks.stream_label(si.domain, si.account, si.name) AS entity_name, NULL::VARCHAR AS entity_key,
       sv.name AS server,
       CASE WHEN b.window_minutes >= p_crit_window_minutes THEN 'warning' ELSE 'info' END AS severity,
       CAST(b.window_minutes AS DOUBLE) AS duplicate_window_minutes, CAST(b.msgs_per_sec AS DOUBLE) AS msgs_per_sec
FROM busy b
JOIN hx.stream_ident si ON si.stream_pk = b.stream_pk
LEFT JOIN hx.server_ident sv ON sv.server_pk = b.leader_server_pk`,
};
