import type { Check } from "../check.ts";

export const server010: Check = {
  code: "server-010",
  name: "High Route RTT",
  description:
    "The round-trip time a server measured on one of its route connections to another server of its cluster is above the threshold. Servers of a cluster are meant to be close (one data centre or region): a slow route delays message delivery across the cluster and JetStream raft replication, so publishes to replicated streams are acknowledged later and leaders may be lost.",
  remediation:
    "Compare RTTs with `nats server report routes` (or ROUTEZ on both servers): one slow route points at the network path between two hosts, all routes of one server at that server (CPU, a full network interface, `pending_size` growing). Check the network between the hosts (latency, packet loss, MTU). Servers far apart should be separate clusters joined by gateways, not routes of one cluster.",
  scope: "route connection",
  entityType: "route",
  severity: "warning",
  category: "performance",
  optimization: false,
  params: [
    {
      name: "p_rtt_ms",
      default: 50,
      description: "Route round-trip time, in milliseconds, above which the check fires.",
    },
  ],
  detailColumns: [
    {
      name: "rtt_ms",
      type: "DOUBLE",
      description: "Round-trip time last measured on the route, milliseconds.",
    },
    { name: "threshold_ms", type: "DOUBLE", description: "Threshold in force (p_rtt_ms)." },
    { name: "cluster", type: "VARCHAR", description: "Cluster of the server reporting the route." },
    {
      name: "remote",
      type: "VARCHAR",
      description: "Server at the other end (its id when no reply named it).",
    },
    { name: "pending_size", type: "BIGINT", description: "Bytes waiting to be written to the route." },
  ],
  sql: `
SELECT r.epoch, r.route_pk AS entity_pk, r.server || ' -> ' || r.remote AS entity_name,
       NULL::VARCHAR AS entity_key, r.server, 'warning' AS severity,
       CAST(r.rtt_ns / 1e6 AS DOUBLE) AS rtt_ms, CAST(p_rtt_ms AS DOUBLE) AS threshold_ms,
       r.cluster, r.remote, CAST(r.pending_size AS BIGINT) AS pending_size
FROM hx.routes r
WHERE r.epoch BETWEEN ep_from AND ep_to AND r.rtt_ns > p_rtt_ms * 1e6`,
};
