import type { Check } from "../check.ts";
import { IDLE_STREAMS_CTE, STREAM_NAME } from "../opt-idle/idle-streams-sql.ts";

/**
 * A stream with p_min_replicas replicas or more (its configuration in force at its latest
 * epoch of the window) that received nothing over the window, by the same rule as
 * opt-idle-002 (idle-streams-sql.ts). Sealed streams count: an archive kept on three
 * servers costs three copies whether or not it can change.
 */
export const optCost001: Check = {
  code: "opt-cost-001",
  name: "Over-Replicated Inactive Stream",
  description:
    "A stream replicated to three servers or more received no message over the whole range. Every replica keeps a full copy of its messages on its server and takes part in the stream's raft group (heartbeats, elections, snapshots), so an idle stream at R3 costs three times the storage of one at R1 and keeps three servers busy for data nothing writes to.",
  remediation:
    "If the stream is still needed but no longer written to (an archive, a finished import), lower its replicas: `nats stream edit <stream> --replicas 1` (or 2), keeping R3 only where losing a server must not lose data or availability; seal it with `nats stream seal <stream>` if it must not change any more. If it is not needed at all, back it up (`nats stream backup <stream> <dir>`) and remove it (`nats stream rm <stream>`).",
  scope: "stream",
  entityType: "stream",
  severity: "info",
  category: "health",
  optimization: true,
  lookbackSeconds: 3600,
  params: [
    {
      name: "p_min_replicas",
      default: 3,
      description: "Replicas from which an inactive stream is reported.",
    },
  ],
  detailColumns: [
    { name: "replicas", type: "INTEGER", description: "Replicas the stream is configured with." },
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
    { name: "bytes", type: "BIGINT", description: "Bytes the stream holds on each replica." },
  ],
  sql: `
WITH ${IDLE_STREAMS_CTE}
SELECT d.epoch, d.stream_pk AS entity_pk, ${STREAM_NAME} AS entity_name, NULL::VARCHAR AS entity_key,
       l.name AS server, 'info' AS severity, CAST(o.replicas AS INTEGER) AS replicas,
       CAST(d.last_seq AS BIGINT) AS last_seq, CAST(d.last_ts AS TIMESTAMPTZ) AS last_ts,
       CAST(d.bytes AS BIGINT) AS bytes
FROM idle_streams d
JOIN hx.stream_ident si ON si.stream_pk = d.stream_pk
LEFT JOIN hx.server_ident l ON l.server_pk = d.leader_server_pk
ASOF JOIN hx.stream_opts o ON o.stream_pk = d.stream_pk AND d.epoch >= o.epoch
WHERE o.replicas >= p_min_replicas`,
};
