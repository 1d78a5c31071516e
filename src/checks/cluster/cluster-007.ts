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
  SELECT s.epoch, s.gateway_pk, i.server_pk, i.gateway, i.direction, s.connected, s.remote_server,
         s.last_connected_epoch, s.last_remote_server
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
-- Links up in the server's latest report before the epoch judged (up then), and configured
-- links down now that were up before: each row says when the link was last up and to which
-- server (the fold carries them), so a link down for days still fires and names them, and a
-- link never up is no loss, without reading the link's history.
lost AS (
  SELECT j.epoch, o.gateway_pk, j.server_pk, o.gateway, o.epoch AS last_connected_epoch,
         o.remote_server AS last_remote_server
  FROM judged j
  ASOF JOIN reported p ON p.server_pk = j.server_pk AND j.prev_epoch >= p.epoch
  JOIN outbound o ON o.epoch = p.epoch AND o.server_pk = j.server_pk AND o.connected
  UNION
  SELECT j.epoch, o.gateway_pk, j.server_pk, o.gateway, o.last_connected_epoch, o.last_remote_server
  FROM judged j JOIN outbound o ON o.epoch = j.epoch AND o.server_pk = j.server_pk AND NOT o.connected
  WHERE o.last_connected_epoch IS NOT NULL
)
SELECT l.epoch, l.gateway_pk AS entity_pk, sv.name || ' -> ' || l.gateway AS entity_name, NULL::VARCHAR AS entity_key,
       sv.name AS server, 'critical' AS severity, l.gateway,
       EXISTS (SELECT 1 FROM outbound c WHERE c.gateway_pk = l.gateway_pk AND c.epoch = l.epoch) AS configured,
       l.last_connected_epoch, l.last_remote_server
FROM lost l
JOIN hx.server_ident sv ON sv.server_pk = l.server_pk
WHERE NOT EXISTS (SELECT 1 FROM outbound c WHERE c.gateway_pk = l.gateway_pk AND c.epoch = l.epoch AND c.connected)`,
};
