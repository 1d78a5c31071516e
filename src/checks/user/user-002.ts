import type { Check } from "../check.ts";

/**
 * One user identity (an account's authorized user) holding more than p_max_connections
 * client connections, counted over every server's CONNZ. A user is named within its
 * account, so the finding's entity is the account and its key the user. Connections that
 * authenticated as nobody (no auth, or the no_auth_user's empty name) are not counted.
 */
export const user002: Check = {
  code: "user-002",
  name: "Excessive User Connections",
  description:
    "One user identity of an account holds more client connections than the threshold, over all servers. Usually a client leaks connections (opens one per request or per thread and never closes them) or many instances share one credential. Each connection costs server memory and file descriptors, counts against the account's and the server's connection limits, and a shared credential cannot be revoked for one application without cutting off the others.",
  remediation:
    "List the connections: `nats server report connections --account <account> --user <user>` (or CONNZ with `auth: true`) and look at their names, client addresses and languages. Fix the client to reuse one connection per process. Give each application its own user (`nsc add user`, or a `users` entry in the account) so they can be told apart and limited, and cap the account's connections with its `max_connections` (in operator mode `nsc edit account <account> --conns <n>`, then `nsc push`: a user JWT has no connection limit of its own).",
  scope: "user",
  entityType: "user",
  severity: "warning",
  category: "saturation",
  optimization: false,
  params: [
    {
      name: "p_max_connections",
      default: 100,
      description: "Client connections one user may hold, all servers, before it fires.",
    },
  ],
  detailColumns: [
    { name: "account", type: "VARCHAR", description: "Account of the user." },
    {
      name: "user",
      type: "VARCHAR",
      description: "The authorized user (a user name, or an nkey in operator mode).",
    },
    { name: "connections", type: "BIGINT", description: "Client connections of the user now, all servers." },
    { name: "servers", type: "VARCHAR[]", description: "Servers the user is connected to, sorted." },
  ],
  sql: `
WITH per_user AS (
  SELECT c.epoch, c.account, c.authorized_user, max(nullif(c.name_tag, '')) AS name_tag,
         count(*) AS connections, list_sort(list(DISTINCT c.server)) AS servers
  FROM checks.epochs_in(ep_from, ep_to) e
  JOIN hx.connections c ON c.epoch = e.epoch
  WHERE coalesce(c.authorized_user, '') <> '' AND c.account IS NOT NULL
  GROUP BY c.epoch, c.account, c.authorized_user
)
SELECT u.epoch, coalesce(a.account_pk, 0) AS entity_pk,
       coalesce(u.name_tag, u.authorized_user) || ' (' || coalesce(nullif(o.name_tag, ''), u.account) || ')' AS entity_name,
       u.authorized_user AS entity_key, NULL::VARCHAR AS server, 'warning' AS severity,
       u.account, u.authorized_user AS user, CAST(u.connections AS BIGINT) AS connections,
       CAST(u.servers AS VARCHAR[]) AS servers
FROM per_user u
LEFT JOIN hx.account_ident a ON a.name = u.account
ASOF LEFT JOIN hx.account_opts o ON o.account_pk = a.account_pk AND u.epoch >= o.epoch
WHERE u.connections > p_max_connections`,
};
