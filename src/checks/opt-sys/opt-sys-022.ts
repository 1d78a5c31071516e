import type { Check } from "../check.ts";

/**
 * Over every epoch of the window: the server's subscriptions (VARZ, interest from routes,
 * gateways and leafnodes included) grew by p_min_growth_pct from the first epoch to the
 * latest, did not fall in at least p_min_mono_frac of the steps between epochs, and grew by
 * as much per client connection, so new clients do not explain them.
 */
export const optSys022: Check = {
  code: "opt-sys-022",
  name: "Subscription Count Growth",
  description:
    "The server's subscription count kept rising over the window (by 20% or more, falling in at most a fifth of the epochs) while its client connections did not grow with it: subscriptions per connection went up as much. That is the pattern of a subscription leak, an application that subscribes (often to a new inbox or subject per request) without ever unsubscribing. Every subscription costs memory on the server and on every server its interest propagates to, and slows subject matching.",
  remediation:
    "Find the connections whose subscription counts grow: `nats server report connections --sort subs` (or CONNZ with `subs=1`, sorted by `subs`) on this server, twice some minutes apart, and the accounts behind them (`nats server report accounts`). Fix the application to unsubscribe (or use request/reply with the client's shared inbox, and `max` on one-shot subscriptions). Meanwhile `max_subscriptions` in the server configuration (per connection), or the `subs` limit of an account JWT, caps the damage.",
  scope: "server",
  entityType: "server",
  severity: "info",
  category: "errors",
  optimization: true,
  lookbackSeconds: 3600,
  params: [
    {
      name: "p_min_epochs",
      default: 10,
      description: "Epochs of the window the server must have answered in.",
    },
    {
      name: "p_min_growth_pct",
      default: 20,
      description:
        "Growth of subscriptions, and of subscriptions per connection, in percent, from which it fires.",
    },
    {
      name: "p_min_mono_frac",
      default: 0.8,
      description: "Share of the steps between epochs in which subscriptions must not fall.",
    },
  ],
  detailColumns: [
    {
      name: "subscriptions_first",
      type: "BIGINT",
      description: "Subscriptions in the first epoch of the window.",
    },
    { name: "subscriptions_last", type: "BIGINT", description: "Subscriptions in the latest epoch." },
    { name: "connections_first", type: "BIGINT", description: "Client connections in the first epoch." },
    { name: "connections_last", type: "BIGINT", description: "Client connections in the latest epoch." },
    {
      name: "rising_frac",
      type: "DOUBLE",
      description: "Share of the steps in which subscriptions did not fall.",
    },
  ],
  sql: `
WITH steps AS (
  SELECT s.epoch, s.server_pk, s.subscriptions, s.connections,
         s.subscriptions - lag(s.subscriptions) OVER (PARTITION BY s.server_pk ORDER BY s.epoch) AS step
  FROM hx.server_stats s
  WHERE s.epoch BETWEEN ep_from AND ep_to AND s.subscriptions IS NOT NULL AND s.connections IS NOT NULL
),
trend AS (
  SELECT server_pk, max(epoch) AS epoch, count(*) AS epochs,
         arg_min(subscriptions, epoch) AS subscriptions_first, arg_max(subscriptions, epoch) AS subscriptions_last,
         arg_min(connections, epoch) AS connections_first, arg_max(connections, epoch) AS connections_last,
         count(step) FILTER (WHERE step >= 0) / count(step) AS rising_frac
  FROM steps GROUP BY server_pk
)
SELECT t.epoch, t.server_pk AS entity_pk, sv.name AS entity_name, NULL::VARCHAR AS entity_key, sv.name AS server,
       'info' AS severity, t.subscriptions_first, t.subscriptions_last, t.connections_first, t.connections_last,
       CAST(t.rising_frac AS DOUBLE) AS rising_frac
FROM trend t
JOIN hx.server_ident sv ON sv.server_pk = t.server_pk
WHERE t.epochs >= greatest(p_min_epochs, 2) AND t.subscriptions_first > 0
  AND t.rising_frac >= p_min_mono_frac
  AND t.subscriptions_last * 100.0 >= (100 + p_min_growth_pct) * t.subscriptions_first
  AND t.subscriptions_last * 100.0 / greatest(t.connections_last, 1)
      >= (100 + p_min_growth_pct) * t.subscriptions_first / greatest(t.connections_first, 1)`,
};
