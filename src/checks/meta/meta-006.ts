import type { Check } from "../check.ts";
import { metaGroupsCte } from "./meta-view.ts";

export const meta006: Check = {
  code: "meta-006",
  name: "Meta Quorum Lost",
  description:
    "Too few JetStream meta peers are online for the meta group to have quorum (floor(cluster_size / 2) + 1 of them): either the meta leader reports that many peers offline, or there is no leader and fewer servers than a quorum report the meta group. Without quorum no stream or consumer can be created, changed or deleted, and JetStream API requests fail. nats-server 2.9 HEALTHZ can still say ok in this state.",
  remediation:
    "Bring the offline servers back: check their processes, logs, disks and the routes between them (`nats server list`, `nats server report jetstream`). Once a majority of the meta peers is back, a leader is elected and the API recovers. If servers are gone for good, restore quorum by starting replacements with the same server names, and remove dead peers with `nats server raft peer-remove` once a leader exists.",
  scope: "meta cluster",
  entityType: "meta_cluster",
  severity: "critical",
  category: "health",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "domain", type: "VARCHAR", description: "JetStream domain of the meta group; empty when none." },
    {
      name: "leader",
      type: "VARCHAR",
      description: "Meta leader; NULL when there is none (the peers could not elect one).",
    },
    { name: "cluster_size", type: "INTEGER", description: "Meta group size." },
    {
      name: "quorum",
      type: "INTEGER",
      description: "Servers needed for quorum: floor(cluster_size / 2) + 1.",
    },
    {
      name: "peers_offline",
      type: "INTEGER",
      description: "Peers the leader reports offline; NULL when there is no leader.",
    },
    { name: "servers_reporting", type: "BIGINT", description: "Servers whose JSZ reported the meta group." },
  ],
  // A leader that other servers name but that did not answer: quorum is unknown, no finding.
  sql: `
WITH ${metaGroupsCte("ep_from", "ep_to")}
SELECT g.epoch, g.meta_pk AS entity_pk, g.group_name AS entity_name, NULL::VARCHAR AS entity_key,
       g.leader AS server, 'critical' AS severity, g.domain, g.leader,
       CAST(g.cluster_size AS INTEGER) AS cluster_size, CAST(g.quorum AS INTEGER) AS quorum,
       CAST(g.peers_offline AS INTEGER) AS peers_offline, CAST(g.servers_reporting AS BIGINT) AS servers_reporting
FROM meta_groups g
WHERE (g.leader_reporting AND g.cluster_size - g.peers_offline < g.quorum)
   OR (g.leader IS NULL AND g.servers_reporting < g.quorum)`,
};
