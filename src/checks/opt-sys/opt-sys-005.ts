import type { Check } from "../check.ts";

export const optSys005: Check = {
  code: "opt-sys-005",
  name: "Route Pending Pressure",
  description:
    "A route connection held more than the threshold of bytes not yet written to the other server of the cluster (ROUTEZ `pending_size`) in at least one epoch of the window. The route, or the server at its other end, does not keep up with the traffic crossing it: messages and raft replication to that server are delayed, and a route whose pending data keeps growing is closed as a slow consumer, cutting the servers apart until it reconnects.",
  remediation:
    "Compare the route's traffic and pending bytes on both ends (`nats server report routes`, ROUTEZ) and the remote server's CPU and network. Spread heavy publishers and subscribers so less traffic crosses the route, give the route more capacity (route pooling `pool_size` on 2.10+, faster network between the hosts), or move a remote site to a gateway or leafnode instead of a route. Servers of one cluster should share a low-latency network.",
  scope: "route connection",
  entityType: "route",
  severity: "warning",
  category: "performance",
  optimization: true,
  lookbackSeconds: 3600,
  params: [
    {
      name: "p_pending_mib",
      default: 1,
      description: "Pending bytes on the route, in MiB, above which an epoch counts as under pressure.",
    },
  ],
  detailColumns: [
    { name: "cluster", type: "VARCHAR", description: "Cluster of the server reporting the route." },
    {
      name: "remote",
      type: "VARCHAR",
      description: "Server at the other end (its id when no reply named it).",
    },
    { name: "peak_pending_bytes", type: "BIGINT", description: "Largest pending_size seen in the window." },
    {
      name: "epochs_over",
      type: "BIGINT",
      description: "Epochs of the window with pending_size over the threshold.",
    },
    { name: "pending_bytes", type: "BIGINT", description: "pending_size at the route's latest epoch." },
  ],
  // Pending bytes come and go within seconds; what matters over a window is whether the
  // route was under pressure at all, how often and how much.
  sql: `
WITH marked AS (
  SELECT r.route_pk, r.epoch, r.pending_size, r.pending_size > p_pending_mib * 1048576 AS over
  FROM hx.route_stats r
  WHERE r.epoch BETWEEN ep_from AND ep_to AND r.pending_size IS NOT NULL
), per_route AS (
  SELECT route_pk, max(epoch) AS epoch, max(pending_size) AS peak_pending_bytes,
         count(*) FILTER (WHERE over) AS epochs_over, arg_max(pending_size, epoch) AS pending_bytes
  FROM marked
  GROUP BY route_pk
  HAVING bool_or(over)
)
SELECT p.epoch, p.route_pk AS entity_pk, sv.name || ' -> ' || i.remote AS entity_name,
       NULL::VARCHAR AS entity_key, sv.name AS server, 'warning' AS severity, sv.cluster, i.remote,
       CAST(p.peak_pending_bytes AS BIGINT) AS peak_pending_bytes, CAST(p.epochs_over AS BIGINT) AS epochs_over,
       CAST(p.pending_bytes AS BIGINT) AS pending_bytes
FROM per_route p
JOIN hx.route_ident i ON i.route_pk = p.route_pk
JOIN hx.server_ident sv ON sv.server_pk = i.server_pk`,
};
