import type { Check } from "../check.ts";
import { metaGroupsCte } from "./meta-view.ts";

/**
 * The claimants are read from every server's reply, so the finding belongs to no server (the
 * leader most name is in its details): a claimant missing from the epoch leaves one claimant,
 * and the findings diff holds a finding of no server until every expected server answered in
 * full, where one labelled with the leader, which did answer, resolved and fired again.
 */
export const meta002: Check = {
  code: "meta-002",
  name: "Leader Disagreement",
  description:
    "More than one server says it is the JetStream meta leader in the same epoch. Briefly during an election this can be a race; when it persists, a server is partitioned or stale and believes it still leads, and JetStream API requests may be answered from a view that is out of date.",
  remediation:
    "Compare what each server reports with `nats server report jetstream` and look for network partitions or route problems between the claimants (`nats server report routes`). If a stale claimant does not step down, restart it. Persistent split leadership is a bug worth reporting with the servers' logs.",
  scope: "meta cluster",
  entityType: "meta_cluster",
  severity: "critical",
  category: "consistency",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "domain", type: "VARCHAR", description: "JetStream domain of the meta group; empty when none." },
    {
      name: "leader",
      type: "VARCHAR",
      description: "The claimant most reporting servers name as leader (the view the meta checks use).",
    },
    { name: "claimants", type: "VARCHAR[]", description: "Servers saying they are the meta leader." },
    {
      name: "leaders_seen",
      type: "VARCHAR[]",
      description: "Distinct leaders named by the reporting servers.",
    },
    { name: "servers_reporting", type: "BIGINT", description: "Servers whose JSZ reported the meta group." },
  ],
  sql: `
WITH ${metaGroupsCte("ep_from", "ep_to")}
SELECT g.epoch, g.meta_pk AS entity_pk, g.group_name AS entity_name, NULL::VARCHAR AS entity_key,
       NULL::VARCHAR AS server, 'critical' AS severity, g.domain, g.leader,
       CAST(g.claimants AS VARCHAR[]) AS claimants, CAST(g.leaders_seen AS VARCHAR[]) AS leaders_seen,
       CAST(g.servers_reporting AS BIGINT) AS servers_reporting
FROM meta_groups g
WHERE len(g.claimants) > 1`,
};
