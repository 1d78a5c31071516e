import type { Check } from "../check.ts";
import { metaGroupsCte } from "./meta-view.ts";

export const meta001: Check = {
  code: "meta-001",
  name: "Offline Replica",
  description:
    "A server of the JetStream meta group is offline according to the meta leader. The leader's reply is the authority on its peers; what a single other server reports is not used. While a peer is offline the meta group has one failure fewer to spare before it loses quorum, and stream or consumer placements cannot use that server.",
  remediation:
    "Find out why the server is down or cut off: check its process and logs, and its routes to the other servers (`nats server report jetstream`, `nats server list`). Bring it back or repair the network. If the server is gone for good, remove it from the meta group with `nats server raft peer-remove <server>` so the group's size and quorum match the servers that exist.",
  scope: "meta cluster peer",
  entityType: "meta_peer",
  severity: "critical",
  category: "health",
  optimization: false,
  params: [],
  detailColumns: [
    {
      name: "meta_group",
      type: "VARCHAR",
      description:
        "Meta group: its JetStream domain, else its members' clusters (east+west when several), not the leader's cluster, so it stays when the leader moves.",
    },
    { name: "domain", type: "VARCHAR", description: "JetStream domain of the meta group; empty when none." },
    { name: "leader", type: "VARCHAR", description: "Meta leader whose reply reports the peer offline." },
    {
      name: "active_ns",
      type: "BIGINT",
      description: "Nanoseconds since the leader last heard from the peer.",
    },
    { name: "peers_offline", type: "INTEGER", description: "Peers the leader reports offline in all." },
    { name: "cluster_size", type: "INTEGER", description: "Meta group size as the leader reports it." },
    {
      name: "quorum",
      type: "INTEGER",
      description: "Servers needed for quorum: floor(cluster_size / 2) + 1.",
    },
  ],
  // The finding belongs to the peer's server, not to the leader that reports it: once the
  // meta group loses quorum no leader reports peers at all, and a peer that is still down
  // (did not answer) must stay firing rather than resolve for want of a report.
  sql: `
WITH ${metaGroupsCte("ep_from", "ep_to")}, peers AS (
  SELECT g.*, unnest(g.peer_names) AS peer, unnest(g.peer_offline) AS offline,
         unnest(g.peer_active_ns) AS active
  FROM meta_groups g
  WHERE g.leader_reporting
)
SELECT p.epoch, p.meta_pk AS entity_pk, p.peer AS entity_name, p.peer AS entity_key, p.peer AS server,
       'critical' AS severity, p.group_name AS meta_group, p.domain, p.leader,
       CAST(p.active AS BIGINT) AS active_ns, CAST(p.peers_offline AS INTEGER) AS peers_offline,
       CAST(p.cluster_size AS INTEGER) AS cluster_size, CAST(p.quorum AS INTEGER) AS quorum
FROM peers p
WHERE p.offline`,
};
