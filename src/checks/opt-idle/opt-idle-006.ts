import type { Check } from "../check.ts";

/**
 * A user identity (an account's authorized user) that held a client connection in some epoch
 * of the window and holds none at its latest epoch. Users are known from CONNZ only (their
 * configuration is not scraped), so "known" means seen connected within the window. The row
 * is about the window's latest epoch.
 *
 * A user is judged only when every server it was seen on answered that epoch in full: a
 * server that did not answer, or answered only part (hx.epochs.servers_partial), may still
 * hold its connections. Connections that authenticated as nobody, and the system account's
 * (natsmon's own among them), are left out.
 */
export const optIdle006: Check = {
  code: "opt-idle-006",
  name: "Disconnected Users",
  description:
    "A user of an account that had client connections earlier in the range has none at the latest epoch. Its clients stopped, crashed or cannot connect any more (expired or revoked credentials, a changed password, network trouble), or the user only connects now and then (a batch job, a CLI). A user that is no longer used keeps valid credentials that could still be used to connect.",
  remediation:
    "Check whether the user's clients should be running: `nats server report connections --account <account>` for what is connected now, and the servers' logs for its authorization errors. If they should, look at the clients and their credentials. If the user is no longer used, remove it from the account (`users` in the server configuration, then reload), or in operator mode revoke it: `nsc revocations add-user --account <account> --name <user>` and `nsc push`.",
  scope: "user",
  entityType: "user",
  severity: "info",
  category: "consistency",
  optimization: true,
  lookbackSeconds: 3600,
  params: [],
  detailColumns: [
    { name: "account", type: "VARCHAR", description: "Account of the user." },
    {
      name: "user",
      type: "VARCHAR",
      description: "The authorized user (a user name, or an nkey in operator mode).",
    },
    {
      name: "last_seen",
      type: "TIMESTAMP WITH TIME ZONE",
      description: "Last epoch of the range in which the user had a client connection.",
    },
    {
      name: "servers",
      type: "VARCHAR[]",
      description: "Servers the user was connected to over the range, sorted.",
    },
  ],
  sql: `
WITH latest AS (
  SELECT e.epoch, e.servers_answered, coalesce(e.servers_partial, []) AS servers_partial
  FROM hx.epochs e
  WHERE e.epoch = (SELECT max(epoch) FROM hx.epochs WHERE epoch BETWEEN ep_from AND ep_to)
), seen AS (
  SELECT s.connection_pk, max(s.epoch) AS last_epoch
  FROM hx.connection_stats s
  WHERE s.epoch BETWEEN ep_from AND ep_to
  GROUP BY s.connection_pk
), users AS (
  SELECT o.account, o.authorized_user, max(s.last_epoch) AS last_seen,
         max(nullif(o.name_tag, '')) AS name_tag, list_sort(list(DISTINCT sv.name)) AS servers
  FROM seen s
  JOIN hx.connection_ident i ON i.connection_pk = s.connection_pk
  JOIN hx.server_ident sv ON sv.server_pk = i.server_pk
  ASOF JOIN hx.connection_opts o ON o.connection_pk = s.connection_pk AND s.last_epoch >= o.epoch
  WHERE coalesce(o.authorized_user, '') <> '' AND o.account IS NOT NULL
  GROUP BY o.account, o.authorized_user
)
SELECT l.epoch, coalesce(a.account_pk, 0) AS entity_pk,
       coalesce(u.name_tag, u.authorized_user) || ' (' || coalesce(nullif(ao.name_tag, ''), u.account) || ')' AS entity_name,
       u.authorized_user AS entity_key, NULL::VARCHAR AS server, 'info' AS severity,
       u.account, u.authorized_user AS user, CAST(u.last_seen AS TIMESTAMPTZ) AS last_seen,
       CAST(u.servers AS VARCHAR[]) AS servers
FROM users u
CROSS JOIN latest l
LEFT JOIN hx.account_ident a ON a.name = u.account
ASOF LEFT JOIN hx.account_opts ao ON ao.account_pk = a.account_pk AND l.epoch >= ao.epoch
WHERE u.last_seen < l.epoch
  AND list_has_all(l.servers_answered, u.servers) AND NOT list_has_any(l.servers_partial, u.servers)
  AND NOT coalesce(ao.is_system, false)
  AND u.account NOT IN (SELECT system_account FROM hx.server_opts WHERE system_account IS NOT NULL)`,
};
