import type { Check } from "../check.ts";

export const jetstream014: Check = {
  code: "jetstream-014",
  name: "Stream Replica Message Count Divergence",
  description:
    "Every replica of a replicated stream is reported current and online by the stream leader, yet the replicas' own message counts differ by more than the thresholds. Replicas that claim to be in sync while holding different data point to a diverged store (lost writes, a replica restored from an old snapshot, or disk damage), which raft will not repair on its own; a leader change onto the short replica would lose messages.",
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
    { name: "replicas", type: "INTEGER", description: "Replicas whose own message count was compared." },
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
  ],
  sql: `
WITH st AS (
  SELECT epoch, stream_pk, account, stream, leader
  FROM hx.streams
  WHERE epoch BETWEEN ep_from AND ep_to AND replicas > 1
),
r AS (
  SELECT st.epoch, st.stream_pk, st.account, st.stream, st.leader,
         -- The leader's view: every peer it lists is current and online (the leader's own row is too).
         bool_and(coalesce(rp.current, false) AND NOT coalesce(rp.offline, true)) AS all_current,
         count(rp.messages) AS compared,
         min(rp.messages) AS min_messages, arg_min(rp.server, rp.messages) AS min_server,
         max(rp.messages) AS max_messages, arg_max(rp.server, rp.messages) AS max_server
  FROM st
  JOIN hx.stream_replicas rp ON rp.epoch = st.epoch AND rp.stream_pk = st.stream_pk
  WHERE rp.epoch BETWEEN ep_from AND ep_to
  GROUP BY ALL
)
SELECT epoch, stream_pk AS entity_pk, account || '/' || stream AS entity_name, NULL::VARCHAR AS entity_key,
       leader AS server, 'critical' AS severity,
       CAST(compared AS INTEGER) AS replicas, min_messages, min_server, max_messages, max_server,
       max_messages - min_messages AS divergence,
       CAST(100.0 * (max_messages - min_messages) / max_messages AS DOUBLE) AS divergence_percent
FROM r
WHERE all_current AND compared >= 2
  AND max_messages - min_messages > p_min_divergence
  AND 100.0 * (max_messages - min_messages) / max_messages > p_divergence_percent`,
};
