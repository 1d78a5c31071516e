import type { Check } from "../check.ts";
import { IDLE_STREAMS_CTE, STREAM_NAME } from "./idle-streams-sql.ts";

/**
 * A stream whose last sequence did not move over the window (idle-streams-sql.ts). A sealed
 * stream takes no messages by design and is left out (its configuration in force at the
 * stream's latest epoch of the window).
 */
export const optIdle002: Check = {
  code: "opt-idle-002",
  name: "Inactive Stream",
  description:
    "The stream received no message over the whole range: its last sequence, as its leader reports it, is the same in every epoch of the range (two at least). A stream nothing publishes to any more still holds its messages on disk or in memory on every replica, counts against the account's and the servers' JetStream limits, and keeps a raft group busy. Streams written to rarely by design (a KV bucket holding configuration, an archive) show up too when the range is short: widen the range before acting.",
  remediation:
    "Confirm that nothing should publish to it: `nats stream info <stream>` (Last Sequence and its time, Subjects) and the publishers' configuration. If it is kept as an archive, seal it (`nats stream seal <stream>`) so it stops being reported and cannot change. If it is no longer needed, back it up if need be (`nats stream backup <stream> <dir>`) and remove it with `nats stream rm <stream>`; otherwise lower its footprint (`nats stream edit <stream> --replicas 1`, or `--max-age`).",
  scope: "stream",
  entityType: "stream",
  severity: "info",
  category: "health",
  optimization: true,
  lookbackSeconds: 3600,
  params: [],
  detailColumns: [
    {
      name: "last_seq",
      type: "BIGINT",
      description: "Last sequence of the stream, unchanged over the range.",
    },
    {
      name: "last_ts",
      type: "TIMESTAMP WITH TIME ZONE",
      description: "Time of the last message the stream received.",
    },
    { name: "messages", type: "BIGINT", description: "Messages the stream holds." },
    { name: "bytes", type: "BIGINT", description: "Bytes the stream holds (per replica)." },
  ],
  sql: `
WITH ${IDLE_STREAMS_CTE}
SELECT d.epoch, d.stream_pk AS entity_pk, ${STREAM_NAME} AS entity_name, NULL::VARCHAR AS entity_key,
       l.name AS server, 'info' AS severity, CAST(d.last_seq AS BIGINT) AS last_seq,
       CAST(d.last_ts AS TIMESTAMPTZ) AS last_ts, CAST(d.messages AS BIGINT) AS messages,
       CAST(d.bytes AS BIGINT) AS bytes
FROM idle_streams d
JOIN hx.stream_ident si ON si.stream_pk = d.stream_pk
LEFT JOIN hx.server_ident l ON l.server_pk = d.leader_server_pk
ASOF LEFT JOIN hx.stream_opts o ON o.stream_pk = d.stream_pk AND d.epoch >= o.epoch
WHERE NOT coalesce(o.sealed, false)`,
};
