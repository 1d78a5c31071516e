import type { Check } from "../check.ts";

/**
 * The members of a cluster are the servers the epoch expects (seen now or lately, until
 * forgotten) whose configuration names that cluster, so a member that is down still counts:
 * its peers' missing routes to it are real. Route connections are VARZ `remotes` (distinct
 * remote servers) where reported, else `routes`: from 2.10 a pooled route is several
 * connections to one server, and only distinct servers say whether the mesh is full.
 */
export const cluster005: Check = {
  code: "cluster-005",
  name: "Route Count Low",
  description:
    "The server is routed to fewer servers than there are other servers in its cluster: the full mesh of routes is broken. A message published on one server is forwarded over routes only to servers it has a route to, never relayed further, so subscribers on a server without a route to the publisher's server miss it; JetStream replicas and the meta group lose their peer, and requests through the system account do not reach every server. A member that is down leaves its peers with a missing route too.",
  remediation:
    "See which routes exist: `nats server report routes` (or ROUTEZ of the server) against the cluster's members in `nats server list`. Start a server that is down. Otherwise check that every server's `cluster { routes: [...] }` reaches the others (seed URLs, DNS names), that `cluster.listen` is reachable through firewalls, that the cluster names, route credentials and TLS settings match, and the server log for `Error trying to connect to route`.",
  scope: "server",
  entityType: "server",
  severity: "warning",
  category: "health",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "cluster", type: "VARCHAR", description: "Cluster of the server." },
    { name: "routed_servers", type: "INTEGER", description: "Remote servers the server has routes to." },
    { name: "expected_routes", type: "INTEGER", description: "Other members of the cluster (members - 1)." },
    {
      name: "members",
      type: "VARCHAR[]",
      description: "Servers of the cluster the epoch expects, sorted, the server included.",
    },
  ],
  sql: `
WITH e AS (SELECT * FROM checks.epochs_in(ep_from, ep_to)),
expected AS (SELECT e.epoch, unnest(e.servers_expected) AS name FROM e),
placed AS (
  SELECT x.epoch, x.name, coalesce(o.cluster_name, i.cluster) AS cluster
  FROM expected x
  JOIN hx.server_ident i ON i.name = x.name
  ASOF LEFT JOIN hx.server_opts o ON o.server_pk = i.server_pk AND x.epoch >= o.epoch
),
clusters AS (
  SELECT epoch, cluster, list_sort(list(name)) AS members FROM placed WHERE cluster IS NOT NULL GROUP BY ALL
)
SELECT s.epoch, s.server_pk AS entity_pk, s.server AS entity_name, NULL::VARCHAR AS entity_key, s.server,
       'warning' AS severity, s.cluster, CAST(coalesce(s.remotes, s.routes) AS INTEGER) AS routed_servers,
       CAST(len(c.members) - 1 AS INTEGER) AS expected_routes, CAST(c.members AS VARCHAR[]) AS members
FROM hx.servers s
JOIN clusters c ON c.epoch = s.epoch AND c.cluster = s.cluster
WHERE s.epoch BETWEEN ep_from AND ep_to AND list_contains(s.sources, 'varz')
  AND list_contains(c.members, s.server)
  AND coalesce(s.remotes, s.routes) < len(c.members) - 1`,
};
