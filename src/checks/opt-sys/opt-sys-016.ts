import type { Check } from "../check.ts";

export const optSys016: Check = {
  code: "opt-sys-016",
  name: "Direct Gets Disabled",
  description:
    "A replicated stream (more than one replica) does not allow direct gets (allow_direct false). Every read of a single message (`nats stream get`, KV-style lookups, last message per subject) is then a JetStream API request that only the stream leader answers, so reads compete with publishes on the leader and a leader election stalls them. With direct gets, every replica answers reads on `$JS.API.DIRECT.GET`, spreading the load.",
  remediation:
    "Allow direct gets: `nats stream edit <stream> --allow-direct` (or `allow_direct: true` in the stream configuration; KV buckets get it by default). Reads from a follower may lag the leader by the replication delay; clients that need read-after-write on the leader can keep using the message get API. Mirrors can serve direct gets of their origin with `mirror_direct`.",
  scope: "stream",
  entityType: "stream",
  severity: "info",
  category: "performance",
  optimization: true,
  lookbackSeconds: 3600,
  params: [],
  detailColumns: [{ name: "replicas", type: "INTEGER", description: "Replicas of the stream." }],
  // Servers before 2.9.0 never report allow_direct: the fold stores it as NULL, which
  // `NOT o.allow_direct` leaves out.
  minServerVersion: "2.9.0",
  sql: `
WITH latest AS (
  SELECT s.stream_pk, max(s.epoch) AS epoch
  FROM hx.stream_stats s WHERE s.epoch BETWEEN ep_from AND ep_to GROUP BY s.stream_pk
),
undirect AS (
  SELECT s.epoch, s.stream_pk, s.leader_server_pk, o.replicas
  FROM latest l
  JOIN hx.stream_stats s ON s.stream_pk = l.stream_pk AND s.epoch = l.epoch
  ASOF JOIN hx.stream_opts o ON o.stream_pk = s.stream_pk AND s.epoch >= o.epoch
  WHERE s.epoch BETWEEN ep_from AND ep_to AND o.replicas > 1 AND NOT o.allow_direct
)
SELECT u.epoch, u.stream_pk AS entity_pk, checks.stream_label(si.domain, si.account, si.name) AS entity_name, NULL::VARCHAR AS entity_key,
       sv.name AS server, 'info' AS severity, u.replicas
FROM undirect u
JOIN hx.stream_ident si ON si.stream_pk = u.stream_pk
LEFT JOIN hx.server_ident sv ON sv.server_pk = u.leader_server_pk`,
};
