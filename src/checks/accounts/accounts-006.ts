import type { Check } from "../check.ts";

/**
 * The limit is the account JWT's `limits.subs` (hx.account_stats.max_subscriptions).
 * nats-server applies it to each client connection of the account (2.9.10 client.go
 * applyAccountLimits: a client's subscription limit is the lower of its user's and its
 * account's), not to the account's total: the catalogue's gauge summed over servers would
 * fire on a busy account whose every client is far from the limit, and miss the one client
 * that is about to be refused. So the check fires on the connection with the most
 * subscriptions, and reports the account's total over its client connections as detail.
 */
export const accounts006: Check = {
  code: "accounts-006",
  name: "Account Subscription Limit",
  description:
    'A client connection of the account has close to the subscription limit of the account\'s JWT (`limits.subs`). nats-server caps every client connection of the account at that limit: the next subscription of that client is refused with "maximum subscriptions exceeded" and the client loses the messages it meant to receive (an application that subscribes per request or per key fails first).',
  remediation:
    "See the connection in the detail: `nats server report connections --account <account> --sort subs`. Fix a client that leaks subscriptions (subscribes per request without unsubscribing), use wildcards instead of many literal subscriptions, spread the subscriptions over more connections, or raise the limit: `nsc edit account --name <account> --subscriptions <n>` and `nsc push -a <account>`.",
  scope: "account",
  entityType: "account",
  severity: "warning",
  category: "saturation",
  optimization: false,
  params: [
    {
      name: "p_warn_percent",
      default: 90,
      description: "Fires when a connection's subscriptions reach this percentage of the account's limit.",
    },
  ],
  detailColumns: [
    {
      name: "max_subscriptions",
      type: "BIGINT",
      description: "The account JWT's subscription limit, per client connection.",
    },
    { name: "subscriptions", type: "BIGINT", description: "Subscriptions of the connection with the most." },
    { name: "used_pct", type: "DOUBLE", description: "subscriptions as a percentage of max_subscriptions." },
    { name: "connection", type: "VARCHAR", description: "That connection: server, cid and client name." },
    {
      name: "account_subscriptions",
      type: "BIGINT",
      description: "Subscriptions of all the account's client connections, all servers (CONNZ).",
    },
  ],
  sql: `
WITH limits AS (
  SELECT a.epoch, a.account_pk, max(a.max_subscriptions) AS max_subscriptions
  FROM checks.epochs_in(ep_from, ep_to) e
  JOIN hx.account_stats a ON a.epoch = e.epoch
  ANTI JOIN checks.accounts_gone(ep_from, ep_to) g ON g.epoch = a.epoch AND g.account_pk = a.account_pk
  GROUP BY a.epoch, a.account_pk
  HAVING max(a.max_subscriptions) > 0
), worst AS (
  SELECT l.epoch, l.account_pk, l.max_subscriptions, sum(c.subscriptions) AS account_subscriptions,
         max(c.subscriptions) AS subscriptions,
         arg_max(c.server || ' cid ' || c.cid || coalesce(' (' || nullif(c.name, '') || ')', ''), c.subscriptions) AS connection
  FROM limits l
  JOIN hx.account_ident i ON i.account_pk = l.account_pk
  JOIN hx.connections c ON c.epoch = l.epoch AND c.account = i.name
  -- Bounds the view's scan: the join alone would read every epoch's connections.
  WHERE c.epoch BETWEEN ep_from AND ep_to
  GROUP BY ALL
)
SELECT w.epoch, w.account_pk AS entity_pk, coalesce(nullif(o.name_tag, ''), i.name) AS entity_name,
       NULL::VARCHAR AS entity_key, NULL::VARCHAR AS server, 'warning' AS severity,
       CAST(w.max_subscriptions AS BIGINT) AS max_subscriptions, CAST(w.subscriptions AS BIGINT) AS subscriptions,
       CAST(100.0 * w.subscriptions / w.max_subscriptions AS DOUBLE) AS used_pct, w.connection,
       CAST(w.account_subscriptions AS BIGINT) AS account_subscriptions
FROM worst w
JOIN hx.account_ident i ON i.account_pk = w.account_pk
ASOF LEFT JOIN hx.account_opts o ON o.account_pk = w.account_pk AND w.epoch >= o.epoch
WHERE 100.0 * w.subscriptions >= p_warn_percent * w.max_subscriptions`,
};
