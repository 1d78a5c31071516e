import type { Check } from "../check.ts";

/**
 * Read at the latest epoch of the window holding the stream with a leader. Only replicated
 * streams and, among their consumers, the replicated ones (own replica count, or the
 * stream's when the consumer's is 0): an R1 consumer sits where it was placed.
 */
export const optBalance007: Check = {
  code: "opt-balance-007",
  name: "Stream-Consumer Leader Co-location",
  description:
    "The server that leads a replicated stream also leads most of that stream's replicated consumers. Every message is then stored, replicated, delivered and acknowledged by one server while the other replicas only follow: its disk and CPU carry the stream's whole read and write load, and if it fails the stream and nearly all its consumers elect new leaders at the same moment.",
  remediation:
    "See the leaders with `nats stream info <stream>` and `nats consumer report <stream>`. Move consumer leaders to the other replicas with `nats consumer cluster step-down <stream> <consumer>` (repeat until the leaders are spread), or move the stream's leader with `nats stream cluster step-down <stream>`. Leaders concentrate after restarts, when the server that stayed up takes over every group; step some down after a rolling restart.",
  scope: "stream",
  entityType: "stream",
  severity: "info",
  category: "saturation",
  optimization: true,
  lookbackSeconds: 3600,
  params: [
    {
      name: "p_consumer_leader_pct",
      default: 50,
      description:
        "Fires when the stream's leader leads more than this percentage of its replicated consumers.",
    },
    {
      name: "p_min_consumers",
      default: 3,
      description: "Replicated consumers the stream must have at least.",
    },
  ],
  detailColumns: [
    { name: "leader", type: "VARCHAR", description: "Server leading the stream." },
    { name: "replicated_consumers", type: "INTEGER", description: "Replicated consumers of the stream." },
    {
      name: "colocated_consumers",
      type: "INTEGER",
      description: "Those of them the stream's leader also leads.",
    },
    {
      name: "colocated_pct",
      type: "DOUBLE",
      description: "colocated_consumers as a percentage of replicated_consumers.",
    },
  ],
  sql: `
WITH latest AS (
  SELECT stream_pk, max(epoch) AS epoch
  FROM hx.stream_stats
  WHERE epoch BETWEEN ep_from AND ep_to AND leader_server_pk IS NOT NULL
  GROUP BY stream_pk
), streams AS (
  SELECT s.epoch, s.stream_pk, s.domain, s.account, s.stream, s.leader, s.leader_server_pk, s.replicas
  FROM hx.streams s
  JOIN latest l ON l.stream_pk = s.stream_pk AND l.epoch = s.epoch
  WHERE s.epoch BETWEEN ep_from AND ep_to AND s.epoch IN (SELECT epoch FROM latest) AND s.replicas > 1
), counted AS (
  SELECT st.epoch, st.stream_pk, count(*) AS replicated,
         count(*) FILTER (WHERE c.leader_server_pk = st.leader_server_pk) AS colocated
  FROM streams st
  JOIN hx.consumers c ON c.stream_pk = st.stream_pk AND c.epoch = st.epoch
  WHERE c.epoch BETWEEN ep_from AND ep_to AND c.epoch IN (SELECT epoch FROM latest)
    AND CASE WHEN c.replicas > 0 THEN c.replicas ELSE st.replicas END > 1
  GROUP BY ALL
)
SELECT st.epoch, st.stream_pk AS entity_pk, checks.stream_label(st.domain, st.account, st.stream) AS entity_name, NULL::VARCHAR AS entity_key,
       st.leader AS server, 'info' AS severity, st.leader, CAST(c.replicated AS INTEGER) AS replicated_consumers,
       CAST(c.colocated AS INTEGER) AS colocated_consumers,
       CAST(100.0 * c.colocated / c.replicated AS DOUBLE) AS colocated_pct
FROM counted c
JOIN streams st ON st.stream_pk = c.stream_pk AND st.epoch = c.epoch
WHERE c.replicated >= p_min_consumers AND 100.0 * c.colocated > p_consumer_leader_pct * c.replicated`,
};
