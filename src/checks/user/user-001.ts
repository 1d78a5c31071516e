import type { Check } from "../check.ts";

/**
 * A user whose JWT is a bearer token has live client connections. A user is named within
 * its account, so the finding's entity is the account and its key the user (its public
 * key); one finding per user, however many connections and servers.
 */
export const user001: Check = {
  code: "user-001",
  name: "Bearer Token User",
  description:
    "A user whose JWT is a bearer token (`bearer_token: true`) is connected. The server does not ask a bearer-token user to sign its nonce with the user's private key, so the JWT alone is the credential: anyone who copies it (from a log, a config file, a browser) can connect as that user until it expires or is revoked. Bearer tokens are meant for short-lived, narrowly-permissioned users such as browser or MQTT clients behind a callout.",
  remediation:
    "See who uses it: `nats server report connections --account <account>` and the user's name in the detail. Unless a bearer token is required, issue a normal user instead (`nsc edit user --name <user> --bearer=false`, or a new user with `nsc add user`) and hand out its creds file; otherwise give the bearer user an expiry (`nsc edit user --expiry`) and the narrowest permissions. Revoke a token that may have leaked: `nsc revocations add-user --account <account> --name <user>` and `nsc push`.",
  scope: "user",
  entityType: "user",
  severity: "warning",
  category: "errors",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "account", type: "VARCHAR", description: "Account of the user." },
    { name: "user", type: "VARCHAR", description: "The user's public key (authorized user)." },
    { name: "name_tag", type: "VARCHAR", description: "The user JWT's name; NULL when it has none." },
    { name: "connections", type: "BIGINT", description: "Client connections of the user now, all servers." },
    { name: "servers", type: "VARCHAR[]", description: "Servers the user is connected to, sorted." },
  ],
  sql: `
WITH per_user AS (
  SELECT c.epoch, c.account, c.authorized_user, max(nullif(c.name_tag, '')) AS name_tag,
         count(*) AS connections, list_sort(list(DISTINCT c.server)) AS servers
  FROM checks.epochs_in(ep_from, ep_to) e
  JOIN hx.connections c ON c.epoch = e.epoch
  WHERE c.bearer_token AND coalesce(c.authorized_user, '') <> '' AND c.account IS NOT NULL
  GROUP BY c.epoch, c.account, c.authorized_user
)
SELECT u.epoch, coalesce(a.account_pk, 0) AS entity_pk,
       coalesce(u.name_tag, u.authorized_user) || ' (' || coalesce(nullif(o.name_tag, ''), u.account) || ')' AS entity_name,
       u.authorized_user AS entity_key, NULL::VARCHAR AS server, 'warning' AS severity,
       u.account, u.authorized_user AS user, u.name_tag, CAST(u.connections AS BIGINT) AS connections,
       CAST(u.servers AS VARCHAR[]) AS servers
FROM per_user u
LEFT JOIN hx.account_ident a ON a.name = u.account
ASOF LEFT JOIN hx.account_opts o ON o.account_pk = a.account_pk AND u.epoch >= o.epoch`,
};
