import type { Check } from "../check.ts";
import { ASSET, ASSET_COLUMN, ASSET_JOINS } from "./raft-node-sql.ts";

export const optSys009: Check = {
  code: "opt-sys-009",
  name: "Leaderless Raft Group",
  description:
    "A raft group that had a leader has none now: no server that answered leads it, and none of them names a leader that could still lead it (one that did not answer). Without a leader the group accepts no writes: a stream group refuses publishes, a consumer group stops delivering and acknowledging, and without a meta leader no stream or consumer can be created, changed or deleted. A group stays leaderless when fewer than a quorum of its servers are up and reachable.",
  remediation:
    "Find the group's servers that are down or cut off (`nats server list`, `nats server report jetstream`; for a stream `nats stream info <stream>`, Cluster section) and bring them back: a quorum, more than half of the members, elects a leader on its own. When members are gone for good, remove them (`nats stream cluster peer-remove <stream> <server>`, or `nats server raft peer-remove <server>` for the meta group) so that the rest form a quorum.",
  scope: "raft group",
  entityType: "raft_group",
  severity: "critical",
  category: "health",
  optimization: true,
  lookbackSeconds: 3600,
  minServerVersion: "2.9.15",
  params: [],
  detailColumns: [
    ASSET_COLUMN,
    {
      name: "members",
      type: "VARCHAR[]",
      description: "The group's servers as its last leader reported them.",
    },
    { name: "servers_reporting", type: "INTEGER", description: "Servers whose reply listed the group." },
    {
      name: "leaderless_since",
      type: "TIMESTAMP WITH TIME ZONE",
      description: "First epoch of the window since which the group has had no leader without a break.",
    },
  ],
  // hx.raft_group_opts gets a row only from a leader's reply: a group with one has had a
  // leader. A group whose leader merely did not answer is not leaderless: the servers that
  // did answer still name it. A leader named by them is stale only when its own JSZ listed
  // the group this epoch (its copy of the asset, or its meta_cluster view) without leading
  // it; one that answered other requests but not JSZ may still lead. Stream and consumer
  // groups are named from 2.9.15 (JSZ raft); before that only the meta group is seen.
  sql: `
WITH latest AS (
  SELECT s.raft_group_pk, max(s.epoch) AS epoch,
         arg_max({leader: s.leader_server_pk, reporting: s.servers_reporting}, s.epoch) AS last,
         max(s.epoch) FILTER (WHERE s.leader_server_pk IS NOT NULL) AS last_led
  FROM hx.raft_group_stats s
  WHERE s.epoch BETWEEN ep_from AND ep_to
  GROUP BY s.raft_group_pk
), leaderless AS (
  SELECT l.epoch, l.raft_group_pk, l.last.reporting AS servers_reporting, l.last_led, o.members
  FROM latest l
  ASOF JOIN hx.raft_group_opts o ON o.raft_group_pk = l.raft_group_pk AND l.epoch >= o.epoch
  WHERE l.last.leader IS NULL AND l.last.reporting > 0
), named AS (
  SELECT x.raft_group_pk
  FROM leaderless x
  JOIN hx.raft_group_ident g ON g.raft_group_pk = x.raft_group_pk
  WHERE (g.kind = 'stream' AND EXISTS (
          SELECT 1 FROM hx.stream_replica_stats r JOIN hx.stream_replica_ident i USING (stream_replica_pk)
          WHERE r.epoch = x.epoch AND r.epoch BETWEEN ep_from AND ep_to AND i.stream_pk = g.stream_pk AND r.leader_seen IS NOT NULL
            AND NOT EXISTS (
              SELECT 1 FROM hx.stream_replica_stats r2 JOIN hx.stream_replica_ident i2 USING (stream_replica_pk)
              JOIN hx.server_ident s2 ON s2.server_pk = i2.server_pk
              WHERE r2.epoch = x.epoch AND r2.epoch BETWEEN ep_from AND ep_to AND i2.stream_pk = g.stream_pk AND s2.name = r.leader_seen AND r2.answered)))
     OR (g.kind = 'consumer' AND EXISTS (
          SELECT 1 FROM hx.consumer_replica_stats r JOIN hx.consumer_replica_ident i USING (consumer_replica_pk)
          WHERE r.epoch = x.epoch AND r.epoch BETWEEN ep_from AND ep_to AND i.consumer_pk = g.consumer_pk AND r.leader_seen IS NOT NULL
            AND NOT EXISTS (
              SELECT 1 FROM hx.consumer_replica_stats r2 JOIN hx.consumer_replica_ident i2 USING (consumer_replica_pk)
              JOIN hx.server_ident s2 ON s2.server_pk = i2.server_pk
              WHERE r2.epoch = x.epoch AND r2.epoch BETWEEN ep_from AND ep_to AND i2.consumer_pk = g.consumer_pk AND s2.name = r.leader_seen AND r2.answered)))
     OR (g.kind = 'meta' AND EXISTS (
          SELECT 1 FROM hx.meta_stats m JOIN hx.meta_ident mi USING (meta_pk)
          WHERE m.epoch = x.epoch AND m.epoch BETWEEN ep_from AND ep_to AND mi.domain = g.domain AND m.leader IS NOT NULL
            AND NOT EXISTS (
              SELECT 1 FROM hx.meta_stats m2 JOIN hx.server_ident s2 ON s2.server_pk = m2.server_pk
              WHERE m2.epoch = x.epoch AND m2.epoch BETWEEN ep_from AND ep_to AND m2.meta_pk = m.meta_pk AND s2.name = m.leader)))
)
SELECT x.epoch, x.raft_group_pk AS entity_pk, g.name AS entity_name, NULL::VARCHAR AS entity_key,
       NULL::VARCHAR AS server, 'critical' AS severity, ${ASSET} AS asset,
       CAST(x.members AS VARCHAR[]) AS members, CAST(x.servers_reporting AS INTEGER) AS servers_reporting,
       (SELECT min(s.epoch) FROM hx.raft_group_stats s
        WHERE s.raft_group_pk = x.raft_group_pk AND s.epoch BETWEEN ep_from AND ep_to
          AND s.epoch > coalesce(x.last_led, '-infinity'::TIMESTAMPTZ)) AS leaderless_since
FROM leaderless x
JOIN hx.raft_group_ident g ON g.raft_group_pk = x.raft_group_pk
${ASSET_JOINS}
WHERE x.raft_group_pk NOT IN (SELECT raft_group_pk FROM named)`,
};
