import type { Check } from "../check.ts";

/**
 * A micro service (an account's service name) with instances in the account's previous
 * gathering and none now. Both epochs must have gathered the account's services
 * (hx.epochs.service_accounts): an account that was not asked, or whose gathering failed,
 * says nothing about its services. The previous gathering is the account's last one at or
 * before the previous epoch. As the catalogue defines it, the finding lasts one epoch: from
 * the next, the service had no instances last time either.
 */
export const service002: Check = {
  code: "service-002",
  name: "Service Down",
  description:
    "A NATS micro service that had instances answering `$SRV.INFO` in the previous epoch has none now: every instance stopped, crashed or lost its connection, or they no longer answer discovery. Requests to its endpoints get no responders or time out.",
  remediation:
    "Check the service's processes and their logs, and whether they can connect (`nats server report connections --account <account>` for their connections, the server log for authorization errors). Once they run, `nats micro ls` and `nats micro info <service>` in the account show them again. A service removed on purpose needs nothing: the finding resolves with the next epoch.",
  scope: "service (NATS micro)",
  entityType: "service",
  severity: "critical",
  category: "health",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "account", type: "VARCHAR", description: "Account the service ran in." },
    { name: "service", type: "VARCHAR", description: "Service name." },
    {
      name: "prev_instances",
      type: "BIGINT",
      description: "Instances in the account's previous gathering.",
    },
    {
      name: "prev_epoch",
      type: "TIMESTAMP WITH TIME ZONE",
      description: "Epoch of that gathering.",
    },
  ],
  sql: `
WITH gathered AS (
  SELECT g.epoch, unnest(g.service_accounts) AS account FROM hx.epochs g
  WHERE g.service_accounts IS NOT NULL AND g.epoch >= ep_from - INTERVAL 1 HOUR AND g.epoch <= ep_to
), now_gathered AS (
  SELECT e.epoch, e.prev_epoch, g.account
  FROM checks.epochs_in(ep_from, ep_to) e JOIN gathered g ON g.epoch = e.epoch
  WHERE e.prev_epoch IS NOT NULL
), compared AS (
  SELECT n.epoch, n.account, p.epoch AS before
  FROM now_gathered n ASOF JOIN gathered p ON p.account = n.account AND n.prev_epoch >= p.epoch
), before_services AS (
  SELECT c.epoch, c.account, c.before, i.name AS service, count(*) AS instances
  FROM compared c
  JOIN hx.service_stats s ON s.epoch = c.before
  JOIN hx.service_ident i ON i.service_pk = s.service_pk AND i.account = c.account
  -- gathered's bounds, written out: the join alone reads every epoch's services.
  WHERE s.epoch >= ep_from - INTERVAL 1 HOUR AND s.epoch <= ep_to
  GROUP BY c.epoch, c.account, c.before, i.name
)
SELECT b.epoch, coalesce(a.account_pk, 0) AS entity_pk, b.service || ' (' || b.account || ')' AS entity_name,
       b.service AS entity_key, NULL::VARCHAR AS server, 'critical' AS severity,
       b.account, b.service, CAST(b.instances AS BIGINT) AS prev_instances, b.before AS prev_epoch
FROM before_services b LEFT JOIN hx.account_ident a ON a.name = b.account
WHERE NOT EXISTS (
  SELECT 1 FROM hx.service_stats s JOIN hx.service_ident i ON i.service_pk = s.service_pk
  WHERE s.epoch = b.epoch AND s.epoch BETWEEN ep_from AND ep_to AND i.account = b.account AND i.name = b.service
)`,
};
