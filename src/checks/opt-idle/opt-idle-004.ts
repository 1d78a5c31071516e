import type { Check } from "../check.ts";
import { IDLE_STREAMS_CTE, latestRowsCte } from "./idle-streams-sql.ts";

/**
 * A consumer with nothing left to do, on a stream that received nothing over the window
 * (idle-streams-sql.ts): at the consumer's latest epoch of the window nothing is pending and
 * nothing awaits an ack. A sealed stream counts as idle here: a consumer that finished
 * reading an archive is as much a removal candidate.
 */
export const optIdle004: Check = {
  code: "opt-idle-004",
  name: "Drained Consumer",
  description:
    "The consumer has delivered and had acknowledged everything its stream holds (nothing pending, nothing awaiting an ack) and the stream received no message over the range. Nothing is left for it to do until something is published again; if nothing will be, the consumer only keeps its state (and, when replicated, a raft group) alive on its servers.",
  remediation:
    "Check whether the stream will receive messages again (`nats stream info <stream>`) and whether an application still uses the consumer (`nats consumer info <stream> <consumer>`: Waiting Pulls, Active for a push consumer). If neither, remove it with `nats consumer rm <stream> <consumer>`; for a one-off read, use an ephemeral consumer or set `inactive_threshold` next time so that the server removes it.",
  scope: "consumer",
  entityType: "consumer",
  severity: "info",
  category: "consistency",
  optimization: true,
  lookbackSeconds: 3600,
  params: [],
  detailColumns: [
    { name: "delivered_stream_seq", type: "BIGINT", description: "Last stream sequence delivered." },
    {
      name: "stream_last_ts",
      type: "TIMESTAMP WITH TIME ZONE",
      description: "Time of the last message the stream received.",
    },
    {
      name: "last_active",
      type: "TIMESTAMP WITH TIME ZONE",
      description: "Time of the consumer's last delivery; NULL when it never delivered.",
    },
  ],
  sql: `
WITH ${IDLE_STREAMS_CTE},
${latestRowsCte("latest", "hx.consumer_stats", "consumer_pk")}
SELECT d.epoch, d.consumer_pk AS entity_pk, checks.consumer_label(si.domain, si.account, si.name, ci.name) AS entity_name,
       NULL::VARCHAR AS entity_key, l.name AS server, 'info' AS severity,
       CAST(d.delivered_stream_seq AS BIGINT) AS delivered_stream_seq,
       CAST(s.last_ts AS TIMESTAMPTZ) AS stream_last_ts, CAST(d.last_active AS TIMESTAMPTZ) AS last_active
FROM latest d
JOIN hx.consumer_ident ci ON ci.consumer_pk = d.consumer_pk
JOIN idle_streams s ON s.stream_pk = ci.stream_pk
JOIN hx.stream_ident si ON si.stream_pk = ci.stream_pk
LEFT JOIN hx.server_ident l ON l.server_pk = d.leader_server_pk
WHERE d.num_pending = 0 AND d.num_ack_pending = 0`,
};
