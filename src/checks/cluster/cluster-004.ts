import type { Check } from "../check.ts";

export const cluster004: Check = {
  code: "cluster-004",
  name: "Cluster Name Whitespace",
  description:
    "The cluster name configured on the server (`cluster { name }`, VARZ `cluster.name`) contains whitespace. The cluster name is also the server's gateway name and the name JetStream placement (`--cluster`) and the meta group use; a stray space makes it differ from what the other servers, gateways and stream placements spell, so routes or gateways are refused and placement finds no cluster. Newer nats-server releases refuse such names outright.",
  remediation:
    "Correct `cluster { name: … }` (and `gateway { name: … }`, which must be the same) in the server's configuration so that it matches the other servers of the cluster exactly, without spaces, then restart the server (a cluster name is not changed by a reload). Check with `nats server list` that every server reports the same cluster.",
  scope: "server",
  entityType: "server",
  severity: "warning",
  category: "consistency",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "cluster_name", type: "VARCHAR", description: "The cluster name, quoted as configured." },
  ],
  sql: `
SELECT s.epoch, s.server_pk AS entity_pk, i.name AS entity_name, NULL::VARCHAR AS entity_key, i.name AS server,
       'warning' AS severity, '"' || o.cluster_name || '"' AS cluster_name
FROM hx.server_stats s
JOIN hx.server_ident i ON i.server_pk = s.server_pk
ASOF JOIN hx.server_opts o ON o.server_pk = s.server_pk AND s.epoch >= o.epoch
WHERE s.epoch BETWEEN ep_from AND ep_to AND list_contains(s.sources, 'varz')
  AND regexp_matches(o.cluster_name, '\\s')`,
};
