import type { Check } from "../check.ts";

/**
 * The counts compared come from every replica's server, so the finding belongs to no server
 * (the stream leader is in its details): a replica's server missing from an epoch leaves its
 * count out, and the findings diff holds a finding of no server until every expected server
 * answered in full, where one labelled with the leader, which did answer, resolved and fired
 * again with a new start. A missing replica only narrows the counts compared, so no
 * divergence appears because one was missed.
 */
export const jetstream014: Check = {
  code: "jetstream-014",
  name: "Stream Replica Message Count Divergence",
  description:
    "Every replica of a replicated stream is reported current and online by the stream leader, and replicas whose own last sequence is the leader's hold message counts that differ by more than the thresholds. Replicas at the same last sequence applied the same writes, so a count difference between them is not lag. Replicas that claim to be in sync while holding different data point to a diverged store (lost writes, a replica restored from an old snapshot, or disk damage), which raft will not repair on its own; a leader change onto the short replica would lose messages. A replica whose own last sequence differs from the leader's is not compared: it is still catching up (the leader may already call it current while it applies a snapshot or a backlog), or its reply was taken a moment before or after the leader's on a busy stream.",
  remediation:
    "Compare the replicas with `nats server report jetstream` and `nats stream info <stream>` on each server (or `nats server stream-check --stream <stream>`). If one replica is short, remove it so it is rebuilt from the leader: `nats stream cluster peer-remove <stream> <server>`, then check the replica count is restored. If the leader is the short one, step it down first (`nats stream cluster step-down <stream>`). Look in the server logs for storage errors on the diverged server.",
  scope: "stream",
  entityType: "stream",
  severity: "critical",
  category: "consistency",
  optimization: false,
  params: [
    {
      name: "p_divergence_percent",
      default: 5,
      description:
        "Fires when the replicas' message counts differ by more than this percentage of the largest count.",
    },
    {
      name: "p_min_divergence",
      default: 1000,
      description: "Fires only when the counts also differ by more than this many messages.",
    },
  ],
  detailColumns: [
    {
      name: "replicas",
      type: "INTEGER",
      description:
        "Replicas at the leader's last sequence whose own message counts were compared (the leader's included).",
    },
    { name: "min_messages", type: "BIGINT", description: "Smallest message count among the replicas." },
    {
      name: "min_server",
      type: "VARCHAR",
      description: "Server holding the replica with the smallest count.",
    },
    { name: "max_messages", type: "BIGINT", description: "Largest message count among the replicas." },
    {
      name: "max_server",
      type: "VARCHAR",
      description: "Server holding the replica with the largest count.",
    },
    { name: "divergence", type: "BIGINT", description: "max_messages minus min_messages." },
    {
      name: "divergence_percent",
      type: "DOUBLE",
      description: "The divergence as a percentage of max_messages.",
    },
    {
      name: "leader",
      type: "VARCHAR",
      description: "Stream leader whose view says every replica is current.",
    },
  ],
  sql: `
WITH r AS (
  -- Replicas of each stream, each server's own count against the leader's view of it. Only
  -- copies at the leader's last sequence are compared: after a freeze or a restart the leader
  -- can report a follower current with lag 0 while the follower's own copy is far behind,
  -- catching up; copies at the same last sequence differ in count only if they diverged.
  SELECT rs.epoch, ri.stream_pk,
         -- Every peer the leader lists is current and online (the leader's own row is too);
         -- a replica the leader does not list claims nothing.
         bool_and(coalesce(rs.current, false) AND NOT coalesce(rs.offline, true)) AS all_current,
         count(rs.messages) FILTER (WHERE rs.last_seq = st.last_seq) AS compared,
         min(rs.messages) FILTER (WHERE rs.last_seq = st.last_seq) AS min_messages,
         arg_min(sv.name, rs.messages) FILTER (WHERE rs.last_seq = st.last_seq) AS min_server,
         max(rs.messages) FILTER (WHERE rs.last_seq = st.last_seq) AS max_messages,
         arg_max(sv.name, rs.messages) FILTER (WHERE rs.last_seq = st.last_seq) AS max_server
  FROM hx.stream_replica_stats rs
  JOIN hx.stream_replica_ident ri ON ri.stream_replica_pk = rs.stream_replica_pk
  JOIN hx.server_ident sv ON sv.server_pk = ri.server_pk
  -- The leader's figures; a stream without a trusted leader this epoch has no row and is not judged.
  JOIN hx.stream_stats st ON st.epoch = rs.epoch AND st.stream_pk = ri.stream_pk
  WHERE rs.epoch BETWEEN ep_from AND ep_to AND st.epoch BETWEEN ep_from AND ep_to
  GROUP BY rs.epoch, ri.stream_pk
  HAVING count(*) > 1
)
SELECT r.epoch, r.stream_pk AS entity_pk, checks.stream_label(i.domain, i.account, i.name) AS entity_name, NULL::VARCHAR AS entity_key,
       NULL::VARCHAR AS server, 'critical' AS severity,
       CAST(r.compared AS INTEGER) AS replicas, r.min_messages, r.min_server, r.max_messages, r.max_server,
       r.max_messages - r.min_messages AS divergence,
       CAST(100.0 * (r.max_messages - r.min_messages) / r.max_messages AS DOUBLE) AS divergence_percent,
       l.name AS leader
FROM r
-- Only streams with a trusted leader this epoch: its view is what "current" means.
JOIN hx.stream_stats s ON s.epoch = r.epoch AND s.stream_pk = r.stream_pk
JOIN hx.stream_ident i ON i.stream_pk = r.stream_pk
LEFT JOIN hx.server_ident l ON l.server_pk = s.leader_server_pk
WHERE s.epoch BETWEEN ep_from AND ep_to AND r.all_current AND r.compared >= 2
  AND r.max_messages - r.min_messages > p_min_divergence
  AND 100.0 * (r.max_messages - r.min_messages) / r.max_messages > p_divergence_percent`,
};
