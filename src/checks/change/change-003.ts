import type { Check } from "../check.ts";

/**
 * An account is present in an epoch when a server's account STATZ lists it, unless its JWT
 * was deleted from the resolver: nats-server 2.9.10 keeps such an account loaded (flagged
 * expired; hx.account_states), so its deletion is its removal. Only servers
 * that listed accounts in both epochs are compared, so a server that did not answer, or
 * one that joined, makes no account come or go.
 */
export const change003: Check = {
  code: "change-003",
  name: "Account Added or Removed",
  description:
    "An account appeared or vanished since the previous epoch, as the servers' account statistics list them. In operator mode an account appears when its JWT is pushed and first used, and vanishes when it is deleted from the resolver (nats-server keeps a deleted account loaded, marked expired; it counts as removed then) or revoked; with a configuration file it changes on a reload. A vanished account's users can no longer connect and its exports disappear for the accounts importing them.",
  remediation:
    "Nothing to do when the change was planned. Otherwise check the account resolver (`nats account info`, `nats server request accounts`, the resolver's JWT store or `nsc describe account`) or the `accounts` block of the configuration, and who changed it. For a removed account, check its importers: `nats server report accounts`.",
  scope: "account",
  entityType: "account",
  severity: "info",
  category: "change",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "change", type: "VARCHAR", description: "added or removed." },
    {
      name: "servers_compared",
      type: "INTEGER",
      description:
        "Servers that listed accounts now and in their last listing up to the epoch checked before (within the hour).",
    },
  ],
  sql: `
WITH recent AS (
  SELECT s.epoch, s.server_pk, s.account_pk FROM hx.account_stats s
  ANTI JOIN (SELECT * FROM checks.accounts_gone(ep_from - INTERVAL 1 HOUR, ep_to) WHERE state = 'deleted') g
    ON g.epoch = s.epoch AND g.account_pk = s.account_pk
  WHERE s.epoch >= ep_from - INTERVAL 1 HOUR AND s.epoch <= ep_to
),
listed AS (SELECT DISTINCT epoch, server_pk FROM recent),
common AS (
  -- Each server that lists accounts now, with its last listing up to the epoch checked
  -- before (within the hour): a server that missed an epoch is compared across the gap.
  SELECT e.epoch, b.epoch AS before, a.server_pk
  FROM checks.epochs_in(ep_from, ep_to) e
  JOIN listed a ON a.epoch = e.epoch
  ASOF JOIN listed b ON b.server_pk = a.server_pk AND e.prev_epoch >= b.epoch
  WHERE e.prev_epoch IS NOT NULL
),
compared AS (SELECT epoch, count(*) AS servers FROM common GROUP BY epoch),
now_acc AS (
  SELECT DISTINCT c.epoch, s.account_pk FROM common c
  JOIN recent s ON s.epoch = c.epoch AND s.server_pk = c.server_pk
),
prev_acc AS (
  SELECT DISTINCT c.epoch, s.account_pk FROM common c
  JOIN recent s ON s.epoch = c.before AND s.server_pk = c.server_pk
),
changes AS (
  SELECT coalesce(n.epoch, p.epoch) AS epoch, coalesce(n.account_pk, p.account_pk) AS account_pk,
         CASE WHEN p.account_pk IS NULL THEN 'added' ELSE 'removed' END AS change
  FROM now_acc n FULL JOIN prev_acc p ON p.epoch = n.epoch AND p.account_pk = n.account_pk
  WHERE n.account_pk IS NULL OR p.account_pk IS NULL
)
SELECT c.epoch, c.account_pk AS entity_pk, checks.account_label(i.name) AS entity_name, NULL::VARCHAR AS entity_key, NULL::VARCHAR AS server,
       'info' AS severity, c.change, CAST(k.servers AS INTEGER) AS servers_compared
FROM changes c
JOIN hx.account_ident i ON i.account_pk = c.account_pk
JOIN compared k ON k.epoch = c.epoch`,
};
