import type { Check } from "../check.ts";

/**
 * A server's configured leafnode remotes (VARZ leaf.remotes, kept in hx.server_opts) against
 * the links its LEAFZ lists: a remote is connected when a link bound to its local account
 * exists (one link per remote account; 2.9.10 does not tell a solicited link from an
 * accepted one). Only servers that answered VARZ and every other request of the epoch
 * (LEAFZ among them) are judged: a reply that did not come is no loss. A dead link vanishes
 * from LEAFZ (nats-monitoring.md §0.8), so the configuration is what it is judged against,
 * and a remote that never connected since the server started fires as well.
 */
export const leaf004: Check = {
  code: "leaf-004",
  name: "Leafnode Remote Not Connected",
  description:
    "A server configured with leafnode remotes (VARZ `leaf.remotes`) has no leafnode connection for one of them in its LEAFZ: the link to the hub for that account is down, or has never come up since the server started. While it is down, the leaf's clients in that account are cut off from the hub: messages, requests and JetStream API calls across the link fail, and interest is not shared. A remote that comes and goes is leaf-005's.",
  remediation:
    "Check the hub is up and reachable from the leaf on its leafnode port (firewalls, DNS of the remote's URLs, TLS certificates) and that the remote's credentials are accepted: look for `Error trying to connect as leafnode` and `authorization violation` in the leaf's and the hub's logs. `nats server report leafnodes` lists the links that exist. If the remote was removed on purpose, remove it from `leafnodes { remotes: [...] }` and reload.",
  scope: "server -> leafnode remote",
  entityType: "leafnode_remote",
  severity: "warning",
  category: "health",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "account", type: "VARCHAR", description: "Local account of the remote." },
    {
      name: "urls",
      type: "VARCHAR[]",
      description: "The remote's URLs as the server reports them (credentials redacted).",
    },
    {
      name: "last_connected_epoch",
      type: "TIMESTAMP WITH TIME ZONE",
      description: "Latest epoch whose LEAFZ of the server had a link for the account; NULL when none did.",
    },
    {
      name: "server_start",
      type: "TIMESTAMP WITH TIME ZONE",
      description:
        "When the server started: the remote has been down since then when it never connected after.",
    },
  ],
  sql: `
WITH e AS (
  SELECT w.epoch, w.prev_epoch, w.servers_answered, coalesce(x.servers_partial, []) AS partial
  FROM checks.epochs_in(ep_from, ep_to) w JOIN hx.epochs x ON x.epoch = w.epoch
),
judged AS (
  SELECT e.epoch, s.server_pk, s.start AS server_start, o.leaf_remote_accounts AS accounts,
         coalesce(o.leaf_remote_urls_each, []) AS urls
  FROM e
  JOIN hx.server_ident sv ON list_contains(e.servers_answered, sv.name) AND NOT list_contains(e.partial, sv.name)
  JOIN hx.server_stats s ON s.epoch = e.epoch AND s.server_pk = sv.server_pk AND list_contains(s.sources, 'varz')
  ASOF JOIN hx.server_opts o ON o.server_pk = s.server_pk AND s.epoch >= o.epoch
  WHERE s.epoch BETWEEN ep_from AND ep_to AND len(o.leaf_remote_accounts) > 0
),
-- One row per remote account: two remotes bound to one account are one link to look for.
remotes AS (
  SELECT epoch, server_pk, server_start, account, list_distinct(flatten(list(urls))) AS urls
  FROM (
    SELECT epoch, server_pk, server_start, coalesce(nullif(accounts[i], ''), '$G') AS account,
           coalesce(urls[i], []) AS urls
    FROM (SELECT *, unnest(range(1, len(accounts) + 1)) AS i FROM judged)
  )
  GROUP BY ALL
),
links AS (
  SELECT s.epoch, i.server_pk, i.account
  FROM hx.leafnode_stats s JOIN hx.leafnode_ident i ON i.leafnode_pk = s.leafnode_pk
  WHERE s.epoch BETWEEN ep_from AND ep_to
),
missing AS (
  SELECT r.* FROM remotes r
  WHERE NOT EXISTS (SELECT 1 FROM links l WHERE l.epoch = r.epoch AND l.server_pk = r.server_pk AND l.account = r.account)
),
-- When each missing link was last up, so that a link down for days names it: up in the hour
-- before the window, or else as the run before reported it (its finding's detail, NULL for a
-- link never up); only a link neither up lately nor reported then reads its whole history,
-- once, not at every epoch it stays down.
recent AS (
  SELECT DISTINCT s.epoch, i.server_pk, i.account
  FROM hx.leafnode_stats s JOIN hx.leafnode_ident i ON i.leafnode_pk = s.leafnode_pk
  WHERE s.epoch >= ep_from - INTERVAL 1 HOUR AND s.epoch < ep_to AND i.server_pk IN (SELECT server_pk FROM missing)
),
carried AS (
  SELECT m.epoch AS judged, m.server_pk, m.account,
         CAST(json_extract_string(f.detail, '$.last_connected_epoch') AS TIMESTAMPTZ) AS epoch
  FROM missing m
  JOIN e ON e.epoch = m.epoch
  JOIN hx.check_findings f
    ON f.epoch = e.prev_epoch AND f.code = 'leaf-004' AND f.entity_ref = m.server_pk AND f.entity_key = m.account
  WHERE f.epoch >= ep_from - INTERVAL 1 HOUR AND f.epoch < ep_to
),
unknown AS (
  SELECT DISTINCT m.server_pk FROM missing m
  WHERE NOT EXISTS (
      SELECT 1 FROM recent r WHERE r.server_pk = m.server_pk AND r.account = m.account AND r.epoch < m.epoch)
    AND NOT EXISTS (
      SELECT 1 FROM carried k WHERE k.judged = m.epoch AND k.server_pk = m.server_pk AND k.account = m.account)
),
history AS (
  SELECT epoch, server_pk, account FROM recent
  UNION ALL SELECT epoch, server_pk, account FROM carried WHERE epoch IS NOT NULL
  UNION ALL
  SELECT DISTINCT s.epoch, i.server_pk, i.account
  FROM hx.leafnode_stats s JOIN hx.leafnode_ident i ON i.leafnode_pk = s.leafnode_pk
  WHERE s.epoch < ep_from - INTERVAL 1 HOUR AND i.server_pk IN (SELECT server_pk FROM unknown)
)
SELECT m.epoch, m.server_pk AS entity_pk, sv.name || ' -> remote (' || m.account || ')' AS entity_name,
       m.account AS entity_key, sv.name AS server, 'warning' AS severity, m.account, m.urls,
       h.epoch AS last_connected_epoch, m.server_start
FROM missing m
JOIN hx.server_ident sv ON sv.server_pk = m.server_pk
ASOF LEFT JOIN history h ON h.server_pk = m.server_pk AND h.account = m.account AND m.epoch > h.epoch`,
};
