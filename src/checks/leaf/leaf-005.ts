import type { Check } from "../check.ts";

/**
 * Leafnode closes from hx.closed_connections (kind Leafnode), each recorded once by the fold
 * in the epoch that first saw it, counted per server, account and other end over the
 * window before each epoch (by the close's own time). Both ends list a close: the hub's
 * record names the leaf (its server name), the leaf's names nothing in 2.9.10. So that a
 * close counts once, a hub's record is left out when the leaf it names is a monitored server
 * that answered the epoch the close was seen in, as that leaf records the same close; the
 * hub is the end that has no leafnode remote configured for the account.
 */
export const leaf005: Check = {
  code: "leaf-005",
  name: "Leafnode Link Churn",
  description:
    "A leafnode link closed and came back repeatedly within the window: the server's closed-connection list (CONNZ) recorded at least the threshold's number of leafnode closes for one remote account (at the leaf) or one leaf (at a hub). Each close drops what crosses the link: messages in flight, requests and JetStream API calls across it fail, and the interest of the whole account is sent again on every reconnect. nats-server 2.9 records a link cut from the other end as `Client Closed`, so the reason alone does not tell a healthy close from a failing one. A close is counted once, at the leaf when the leaf is monitored, else at the hub.",
  remediation:
    "Read both servers' logs around the closes (the finding gives the first and last): `Leafnode connection closed`, `Stale Connection` (raise `ping_interval` × `ping_max` if a large interest set takes long to send, see leaf-003), `authorization violation`, TLS errors, or a hub server restarting. Look for an unstable network path, a load balancer or proxy with an idle timeout between leaf and hub, and two leaf servers with the same `server_name`. `nats server report connections --state closed` lists the closes.",
  scope: "server -> leafnode remote or leaf",
  entityType: "leafnode_remote",
  severity: "warning",
  category: "health",
  optimization: false,
  params: [
    {
      name: "p_closes",
      default: 3,
      description: "Fires at this many leafnode closes or more within the window.",
    },
    { name: "p_window_minutes", default: 10, description: "The window before each epoch, minutes." },
  ],
  detailColumns: [
    { name: "account", type: "VARCHAR", description: "Local account the link is bound to." },
    {
      name: "remote",
      type: "VARCHAR",
      description:
        "The other end: the leaf's server name at a hub, else the addresses the link was closed at.",
    },
    { name: "closes", type: "BIGINT", description: "Leafnode closes within the window, each counted once." },
    {
      name: "first_close",
      type: "TIMESTAMP WITH TIME ZONE",
      description: "First close in the window (server clock).",
    },
    {
      name: "last_close",
      type: "TIMESTAMP WITH TIME ZONE",
      description: "Last close in the window (server clock).",
    },
    { name: "last_reason", type: "VARCHAR", description: "Reason the server gave for the last close." },
    { name: "window_minutes", type: "DOUBLE", description: "Window in force, minutes." },
  ],
  sql: `
WITH e AS (SELECT epoch FROM checks.epochs_in(ep_from, ep_to)),
closes AS (
  SELECT c.epoch AS seen, c.connection_pk, c.server_pk, c.server, c.stop, c.reason,
         coalesce(nullif(c.account, ''), '$G') AS account, nullif(c.name, '') AS leaf, c.ip || ':' || c.port AS address
  FROM hx.closed_connections c
  WHERE c.kind = 'Leafnode' AND c.epoch <= ep_to
    AND c.stop > ep_from - to_seconds(CAST(p_window_minutes * 60 AS BIGINT))
),
-- A hub's record of a close the monitored leaf records too is left out.
counted AS (
  SELECT c.* FROM closes c
  JOIN hx.epochs x ON x.epoch = c.seen
  ASOF LEFT JOIN hx.server_opts o ON o.server_pk = c.server_pk AND c.seen >= o.epoch
  WHERE c.leaf IS NULL
     OR list_contains(coalesce(o.leaf_remote_accounts, []), c.account)
     OR NOT list_contains(x.servers_answered, c.leaf)
     OR list_contains(coalesce(x.servers_partial, []), c.leaf)
),
churn AS (
  SELECT e.epoch, c.server_pk, c.server, c.account, c.leaf, count(DISTINCT c.connection_pk) AS closes,
         min(c.stop) AS first_close, max(c.stop) AS last_close, arg_max(c.reason, c.stop) AS last_reason,
         string_agg(DISTINCT c.address, ', ' ORDER BY c.address) AS addresses
  FROM e JOIN counted c ON c.seen <= e.epoch AND c.stop > e.epoch - to_seconds(CAST(p_window_minutes * 60 AS BIGINT))
  GROUP BY ALL
  HAVING count(DISTINCT c.connection_pk) >= p_closes
)
SELECT epoch, server_pk AS entity_pk,
       CASE WHEN leaf IS NULL THEN server || ' -> remote (' || account || ')' ELSE server || ' - ' || leaf || ' (' || account || ')' END AS entity_name,
       CASE WHEN leaf IS NULL THEN account ELSE leaf || ' (' || account || ')' END AS entity_key,
       server, 'warning' AS severity, account, coalesce(leaf, addresses) AS remote, closes,
       first_close, last_close, last_reason, CAST(p_window_minutes AS DOUBLE) AS window_minutes
FROM churn`,
};
