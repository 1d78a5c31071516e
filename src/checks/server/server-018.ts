import type { Check } from "../check.ts";

export const server018: Check = {
  code: "server-018",
  name: "High Gateway RTT",
  description:
    "The round-trip time of a server's outbound gateway connection to another cluster of the super-cluster is high. Every request, reply and interest change that crosses clusters pays it, and JetStream traffic between clusters (mirrors, sources, meta group peers in other clusters) slows down.",
  remediation:
    "Compare with the expected latency between the sites: `nats server report gateways` shows each gateway connection and its RTT. Look for network congestion, packet loss or a route through a distant region; check that the remote cluster's servers are not overloaded (CPU, slow consumers). Keep latency-sensitive services in the cluster of their clients.",
  scope: "gateway connection",
  entityType: "gateway",
  severity: "warning",
  category: "performance",
  optimization: false,
  params: [
    { name: "p_rtt_ms", default: 50, description: "Fires when the RTT is above this many milliseconds." },
  ],
  detailColumns: [
    { name: "gateway", type: "VARCHAR", description: "Remote gateway (cluster) the connection goes to." },
    { name: "remote_server", type: "VARCHAR", description: "Server of the remote gateway at the other end." },
    { name: "rtt_ms", type: "DOUBLE", description: "Round-trip time last measured, milliseconds." },
    { name: "threshold_ms", type: "DOUBLE", description: "Threshold in force, milliseconds." },
  ],
  // Outbound connections only: each gateway connection is some server's outbound one, so the
  // inbound rows are the same links seen from the other end and would report them twice.
  sql: `
SELECT g.epoch, g.gateway_pk AS entity_pk, g.server || ' -> ' || g.gateway AS entity_name,
       NULL::VARCHAR AS entity_key, g.server, 'warning' AS severity,
       g.gateway, g.remote_server,
       CAST(g.rtt_ns / 1e6 AS DOUBLE) AS rtt_ms,
       CAST(p_rtt_ms AS DOUBLE) AS threshold_ms
FROM hx.gateways g
WHERE g.epoch BETWEEN ep_from AND ep_to
  AND g.direction = 'outbound' AND g.connected
  AND g.rtt_ns > CAST(p_rtt_ms AS DOUBLE) * 1e6`,
};
