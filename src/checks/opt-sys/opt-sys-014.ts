import type { Check } from "../check.ts";

/**
 * Pending bytes are a gauge that a busy link fills and drains within seconds, so the latest
 * epoch alone would miss most pressure: over the window, a connection fires when any epoch
 * saw it above the threshold, and its row is about the latest epoch it was connected in.
 */
export const optSys014: Check = {
  code: "opt-sys-014",
  name: "Gateway Pending Pressure",
  description:
    "A gateway connection to another cluster of the super-cluster held more than 1 MiB of data waiting to be written in at least one epoch of the window. Data queues up when this server produces cross-cluster traffic faster than the link or the remote server takes it: messages to the other cluster arrive late, and a connection whose backlog keeps growing is eventually closed as a slow consumer and reconnected, losing what was queued.",
  remediation:
    "Look at the link with `nats server report gateways` (RTT, traffic) and at the network between the sites (bandwidth, packet loss). Reduce what crosses it: keep publishers and their subscribers or JetStream assets in one cluster, and avoid wide subscriptions (`>`) in remote clusters that pull every message across (interest-only gateway mode, sending only what the other cluster subscribes to, is not an option: servers from 2.9.0 use it for every account and older ones switch a busy account to it by themselves; GATEWAYZ `interest_mode` shows it per account). Check that the remote servers are not overloaded (CPU, slow consumers).",
  scope: "gateway connection",
  entityType: "gateway",
  severity: "warning",
  category: "performance",
  optimization: true,
  lookbackSeconds: 3600,
  params: [
    {
      name: "p_pending_mib",
      default: 1,
      description: "Bytes waiting to be written, in MiB, above which an epoch counts as under pressure.",
    },
  ],
  detailColumns: [
    { name: "gateway", type: "VARCHAR", description: "Remote gateway (cluster) of the connection." },
    { name: "direction", type: "VARCHAR", description: "outbound (this server connects) or inbound." },
    { name: "remote_server", type: "VARCHAR", description: "Server at the other end in the latest epoch." },
    { name: "pending_bytes", type: "BIGINT", description: "Bytes waiting in the latest epoch." },
    {
      name: "peak_pending_bytes",
      type: "BIGINT",
      description: "Most bytes waiting in any epoch of the window.",
    },
    { name: "epochs_over", type: "BIGINT", description: "Epochs of the window above the threshold." },
  ],
  sql: `
WITH pressed AS (
  SELECT s.gateway_pk, max(s.epoch) AS epoch, arg_max(s.pending_bytes, s.epoch) AS pending_bytes,
         arg_max(s.remote_server, s.epoch) AS remote_server, max(s.pending_bytes) AS peak_pending_bytes,
         count(*) FILTER (WHERE s.pending_bytes > p_pending_mib * 1048576.0) AS epochs_over
  FROM hx.gateway_stats s
  WHERE s.epoch BETWEEN ep_from AND ep_to AND s.connected
  GROUP BY s.gateway_pk
)
SELECT p.epoch, p.gateway_pk AS entity_pk,
       sv.name || CASE WHEN i.direction = 'outbound' THEN ' -> ' || i.gateway
                       ELSE ' <- ' || i.gateway || '/' || coalesce(p.remote_server, i.remote_server) END AS entity_name,
       NULL::VARCHAR AS entity_key, sv.name AS server, 'warning' AS severity,
       i.gateway, i.direction, p.remote_server, p.pending_bytes, p.peak_pending_bytes, p.epochs_over
FROM pressed p
JOIN hx.gateway_ident i ON i.gateway_pk = p.gateway_pk
JOIN hx.server_ident sv ON sv.server_pk = i.server_pk
WHERE p.epochs_over > 0`,
};
