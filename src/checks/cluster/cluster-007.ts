import type { Check } from "../check.ts";

/**
 * A server's outbound gateway link is keyed by the remote cluster (hx.gateway_ident's
 * outbound row has no remote server), so a reconnect to another server of that cluster is
 * no loss. It fires when the link was connected in the server's latest GATEWAYZ at or
 * before the previous epoch and is not now; for a configured gateway (VARZ lists it, so
 * the fold keeps a not-connected row) it goes on firing while the link stays down after
 * having been up, and resolves when it is back or no longer configured. A discovered
 * (implicit) gateway leaves no row once gone, so its loss fires for the one epoch. Only
 * servers whose GATEWAYZ came this epoch are judged: a reply that did not come is no loss.
 */
export const cluster007: Check = {
  code: "cluster-007",
  name: "Gateway Disconnection",
  description:
    "The server lost its outbound gateway connection to a remote cluster of the super-cluster since the previous epoch, and has not connected to any server of that cluster again. Without it, messages published on this server no longer reach subscribers and responders in the remote cluster, requests across clusters time out, JetStream mirrors and sources across clusters stop, and the meta group may lose peers in the other cluster.",
  remediation:
    "Check the remote cluster is up (`nats server list`, `nats server report gateways`) and reachable from this server on its gateway port (firewalls, DNS of the `gateway { gateways: [{ name, urls }] }` URLs, TLS certificates). Look for `Gateway connection closed` and `Error trying to connect to gateway` in both servers' logs. If the remote cluster was removed on purpose, remove it from the `gateway.gateways` configuration and reload.",
  scope: "server -> remote cluster (gateway link)",
  entityType: "gateway",
  severity: "critical",
  category: "health",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "gateway", type: "VARCHAR", description: "Remote gateway (cluster) the link went to." },
    {
      name: "configured",
      type: "BOOLEAN",
      description: "Whether the server's configuration still lists the gateway.",
    },
    {
      name: "last_connected_epoch",
      type: "TIMESTAMP WITH TIME ZONE",
      description: "Latest epoch in which the link was connected.",
    },
    {
      name: "last_remote_server",
      type: "VARCHAR",
      description: "Server of the remote cluster the link was connected to then.",
    },
  ],
  sql: `
WITH e AS (
  SELECT w.epoch, w.prev_epoch, w.servers_answered, coalesce(x.servers_partial, []) AS partial
  FROM checks.epochs_in(ep_from, ep_to) w JOIN hx.epochs x ON x.epoch = w.epoch
),
stats AS (
  SELECT s.epoch, s.gateway_pk, i.server_pk, i.gateway, i.direction, s.connected
  FROM hx.gateway_stats s JOIN hx.gateway_ident i ON i.gateway_pk = s.gateway_pk
  WHERE s.epoch >= ep_from - INTERVAL 1 HOUR AND s.epoch <= ep_to
),
outbound AS (SELECT * EXCLUDE (direction) FROM stats WHERE direction = 'outbound'),
reported AS (SELECT DISTINCT epoch, server_pk FROM stats),
judged AS (
  SELECT e.epoch, e.prev_epoch, sv.server_pk
  FROM e JOIN hx.server_ident sv ON list_contains(e.servers_answered, sv.name) AND NOT list_contains(e.partial, sv.name)
  UNION
  SELECT e.epoch, e.prev_epoch, r.server_pk FROM e JOIN reported r ON r.epoch = e.epoch
),
candidates AS (
  SELECT j.epoch, o.gateway_pk, j.server_pk, o.gateway
  FROM judged j
  ASOF JOIN reported p ON p.server_pk = j.server_pk AND j.prev_epoch >= p.epoch
  JOIN outbound o ON o.epoch = p.epoch AND o.server_pk = j.server_pk AND o.connected
  UNION
  SELECT j.epoch, o.gateway_pk, j.server_pk, o.gateway
  FROM judged j JOIN outbound o ON o.epoch = j.epoch AND o.server_pk = j.server_pk AND NOT o.connected
),
-- When each candidate link was last up, so that a link down for days still fires and names
-- it (a link never up is no loss). Up in the hour before the window, or else as the run
-- before reported it (its finding's detail); only a link neither up lately nor reported then
-- reads its whole history, once, not at every epoch it stays down. Each row is a time the
-- link was up, so the latest before the epoch judged is the answer.
recent AS (
  SELECT s.epoch, s.gateway_pk, s.remote_server FROM hx.gateway_stats s
  WHERE s.connected AND s.epoch >= ep_from - INTERVAL 1 HOUR AND s.epoch < ep_to
    AND s.gateway_pk IN (SELECT gateway_pk FROM candidates)
),
carried AS (
  SELECT c.epoch AS judged, c.gateway_pk,
         CAST(json_extract_string(f.detail, '$.last_connected_epoch') AS TIMESTAMPTZ) AS epoch,
         json_extract_string(f.detail, '$.last_remote_server') AS remote_server
  FROM candidates c
  JOIN e ON e.epoch = c.epoch
  JOIN hx.check_findings f ON f.epoch = e.prev_epoch AND f.code = 'cluster-007' AND f.entity_ref = c.gateway_pk
  WHERE f.epoch >= ep_from - INTERVAL 1 HOUR AND f.epoch < ep_to
),
unknown AS (
  SELECT DISTINCT c.gateway_pk FROM candidates c
  WHERE NOT EXISTS (SELECT 1 FROM recent r WHERE r.gateway_pk = c.gateway_pk AND r.epoch < c.epoch)
    AND NOT EXISTS (SELECT 1 FROM carried k WHERE k.judged = c.epoch AND k.gateway_pk = c.gateway_pk)
),
history AS (
  SELECT epoch, gateway_pk, remote_server FROM recent
  UNION ALL SELECT epoch, gateway_pk, remote_server FROM carried
  UNION ALL
  SELECT s.epoch, s.gateway_pk, s.remote_server FROM hx.gateway_stats s
  WHERE s.connected AND s.epoch < ep_from - INTERVAL 1 HOUR AND s.gateway_pk IN (SELECT gateway_pk FROM unknown)
),
lost AS (
  SELECT c.*, h.epoch AS last_connected_epoch, h.remote_server AS last_remote_server
  FROM candidates c ASOF JOIN history h ON h.gateway_pk = c.gateway_pk AND c.epoch > h.epoch
)
SELECT l.epoch, l.gateway_pk AS entity_pk, sv.name || ' -> ' || l.gateway AS entity_name, NULL::VARCHAR AS entity_key,
       sv.name AS server, 'critical' AS severity, l.gateway,
       EXISTS (SELECT 1 FROM outbound c WHERE c.gateway_pk = l.gateway_pk AND c.epoch = l.epoch) AS configured,
       l.last_connected_epoch, l.last_remote_server
FROM lost l
JOIN hx.server_ident sv ON sv.server_pk = l.server_pk
WHERE NOT EXISTS (SELECT 1 FROM outbound c WHERE c.gateway_pk = l.gateway_pk AND c.epoch = l.epoch AND c.connected)`,
};
