import type { Check } from "../check.ts";
import { metaGroupsCte } from "./meta-view.ts";

export const meta007: Check = {
  code: "meta-007",
  name: "Even Cluster Size",
  description:
    "The JetStream meta group has an even number of peers. Quorum is a strict majority, so an even-sized group tolerates no more failures than the odd size below it (4 peers survive 1 failure, like 3) while a network split into two equal halves leaves neither side with quorum.",
  remediation:
    "Run an odd number of JetStream-enabled servers in the meta group (3 or 5 is usual): add one JetStream server, or disable JetStream on one (or remove it and then `nats server raft peer-remove <server>`). If a server was removed by mistake, bring it back.",
  scope: "meta cluster",
  entityType: "meta_cluster",
  severity: "warning",
  category: "health",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "domain", type: "VARCHAR", description: "JetStream domain of the meta group; empty when none." },
    {
      name: "cluster_size",
      type: "INTEGER",
      description: "Meta group size (the leader's view, else the largest reported).",
    },
    {
      name: "quorum",
      type: "INTEGER",
      description: "Servers needed for quorum: floor(cluster_size / 2) + 1.",
    },
    {
      name: "failures_tolerated",
      type: "INTEGER",
      description: "Peers that can fail with quorum kept: cluster_size - quorum.",
    },
  ],
  sql: `
WITH ${metaGroupsCte("ep_from", "ep_to")}
SELECT g.epoch, g.meta_pk AS entity_pk, g.group_name AS entity_name, NULL::VARCHAR AS entity_key,
       g.leader AS server, 'warning' AS severity, g.domain,
       CAST(g.cluster_size AS INTEGER) AS cluster_size, CAST(g.quorum AS INTEGER) AS quorum,
       CAST(g.cluster_size - g.quorum AS INTEGER) AS failures_tolerated
FROM meta_groups g
WHERE g.cluster_size > 1 AND g.cluster_size % 2 = 0`,
};
