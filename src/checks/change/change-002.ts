import type { Check } from "../check.ts";

/**
 * Compared with the configuration in force at the server's latest VARZ at or before the
 * previous epoch, and only while JetStream is on at both: turning JetStream on or off is
 * not a change of domain.
 */
export const change002: Check = {
  code: "change-002",
  name: "JetStream Domain Changed",
  description:
    "The server's JetStream domain (`jetstream { domain }`) differs from the previous epoch. The domain names the JetStream API subjects (`$JS.<domain>.API`) and the meta group the server belongs to: clients and mirrors or sources that name the old domain no longer reach this server's streams, and a server that moved into another domain's cluster splits or joins a meta group.",
  remediation:
    "Confirm the change was intended. If not, restore `jetstream { domain: … }` in the server's configuration and restart it. If it was, move every server of the cluster to the same domain, and update clients (`nats --js-domain`), leafnode setups and stream mirrors and sources (`external.api`) that name the domain.",
  scope: "server",
  entityType: "server",
  severity: "warning",
  category: "change",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "js_domain", type: "VARCHAR", description: "JetStream domain now; empty when none." },
    { name: "previous_js_domain", type: "VARCHAR", description: "JetStream domain before; empty when none." },
  ],
  sql: `
WITH cur AS (
  SELECT e.epoch, e.prev_epoch, s.server_pk, s.server, s.js_domain
  FROM checks.epochs_in(ep_from, ep_to) e
  JOIN hx.servers s ON s.epoch = e.epoch
  WHERE e.prev_epoch IS NOT NULL AND list_contains(s.sources, 'varz') AND s.jetstream
),
before AS (
  SELECT epoch, server_pk, jetstream, js_domain FROM hx.servers
  WHERE list_contains(sources, 'varz') AND epoch >= ep_from - INTERVAL 1 HOUR AND epoch < ep_to
)
SELECT c.epoch, c.server_pk AS entity_pk, c.server AS entity_name, NULL::VARCHAR AS entity_key, c.server,
       'warning' AS severity, coalesce(c.js_domain, '') AS js_domain, coalesce(p.js_domain, '') AS previous_js_domain
FROM cur c
ASOF JOIN before p ON p.server_pk = c.server_pk AND c.prev_epoch >= p.epoch
WHERE p.jetstream AND coalesce(c.js_domain, '') <> coalesce(p.js_domain, '')`,
};
