import type { Check } from "../check.ts";
import { metaGroupsCte } from "./meta-view.ts";

export const meta008: Check = {
  code: "meta-008",
  name: "Meta Pending High",
  description:
    "The JetStream meta leader has more requests waiting than the threshold (JSZ meta_cluster.pending, nats-server 2.10.21+: JetStream API requests queued for the meta layer). The meta leader handles every stream and consumer create, update and delete; a long queue means it cannot keep up, API calls time out and clients retry, which makes the queue longer.",
  remediation:
    "Find what floods the JetStream API (`nats server report jetstream`, account API counters, advisories on $JS.EVENT.ADVISORY.API): typically many clients creating consumers or asking stream and consumer info in a loop. Reduce those calls (reuse durable consumers, cache info, back off on retries), check the leader's CPU and storage latency, and consider moving leadership with `nats server raft step-down`.",
  scope: "meta cluster (leader)",
  entityType: "meta_cluster",
  severity: "warning",
  category: "performance",
  optimization: false,
  minServerVersion: "2.10.21",
  params: [
    { name: "p_max_pending", default: 500, description: "Pending meta requests above which it is too many." },
  ],
  detailColumns: [
    { name: "domain", type: "VARCHAR", description: "JetStream domain of the meta group; empty when none." },
    { name: "leader", type: "VARCHAR", description: "Meta leader whose queue this is." },
    {
      name: "pending",
      type: "BIGINT",
      description: "Requests waiting on the leader (meta_cluster.pending).",
    },
    { name: "version", type: "VARCHAR", description: "nats-server version of the leader." },
    { name: "max_pending", type: "DOUBLE", description: "Threshold in force." },
  ],
  sql: `
WITH ${metaGroupsCte("ep_from", "ep_to")}
SELECT g.epoch, g.meta_pk AS entity_pk, g.group_name AS entity_name, NULL::VARCHAR AS entity_key,
       g.leader AS server, 'warning' AS severity, g.domain, g.leader, CAST(g.pending AS BIGINT) AS pending,
       o.version, CAST(p_max_pending AS DOUBLE) AS max_pending
FROM meta_groups g
ASOF JOIN hx.server_opts o ON o.server_pk = g.leader_server_pk AND g.epoch >= o.epoch
WHERE g.leader_reporting AND g.pending > p_max_pending AND checks.version_at_least(o.version, '2.10.21')`,
};
