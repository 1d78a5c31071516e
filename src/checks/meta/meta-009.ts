import type { Check } from "../check.ts";
import { metaGroupsCte } from "./meta-view.ts";

export const meta009: Check = {
  code: "meta-009",
  name: "Meta Cluster Size Decreased",
  description:
    "The JetStream meta group has fewer peers than in the previous epoch: a server was removed from the group (`nats server raft peer-remove`, or a server that left for good). An offline peer is still a member and does not count here (see meta-001). A smaller group tolerates fewer failures, and the assets placed on the removed server need new replicas.",
  remediation:
    "Confirm the removal was intended. If not, bring the server back with its original server name and JetStream store so it rejoins. If it was, make sure the group size is still odd (see meta-007) and check that replicated streams and consumers have all their replicas again (`nats stream report`).",
  scope: "meta cluster",
  entityType: "meta_cluster",
  severity: "critical",
  category: "health",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "domain", type: "VARCHAR", description: "JetStream domain of the meta group; empty when none." },
    { name: "peers", type: "INTEGER", description: "Meta group members now, leader included." },
    { name: "prev_peers", type: "INTEGER", description: "Meta group members in the previous epoch." },
    {
      name: "removed",
      type: "VARCHAR[]",
      description: "Members of the previous epoch that are gone, sorted.",
    },
    { name: "members", type: "VARCHAR[]", description: "Members now, sorted." },
  ],
  // Membership is the leader's (hx.meta_opts); it holds through epochs without a leader, so an
  // election does not read as a shrink.
  sql: `
WITH ${metaGroupsCte("ep_from", "ep_to")}, sized AS (
  SELECT g.epoch, g.meta_pk, g.group_name, g.leader, g.domain, e.prev_epoch, now.members
  FROM meta_groups g
  JOIN checks.epochs_in(ep_from, ep_to) e ON e.epoch = g.epoch
  ASOF JOIN hx.meta_opts now ON now.meta_pk = g.meta_pk AND g.epoch >= now.epoch
  WHERE e.prev_epoch IS NOT NULL
)
SELECT s.epoch, s.meta_pk AS entity_pk, s.group_name AS entity_name, NULL::VARCHAR AS entity_key,
       s.leader AS server, 'critical' AS severity, s.domain, CAST(len(s.members) AS INTEGER) AS peers,
       CAST(len(prev.members) AS INTEGER) AS prev_peers,
       CAST(list_sort(list_filter(prev.members, m -> NOT list_contains(s.members, m))) AS VARCHAR[]) AS removed,
       CAST(s.members AS VARCHAR[]) AS members
FROM sized s
ASOF JOIN hx.meta_opts prev ON prev.meta_pk = s.meta_pk AND s.prev_epoch >= prev.epoch
WHERE len(s.members) < len(prev.members)`,
};
